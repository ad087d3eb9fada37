//! What a receiver announced of its quota, as every store records it: the
//! rule that turns a response's announcement into the destination's
//! learned quota, written once. The token take paces by it (`bucket.rs`,
//! and PostgreSQL's `TAKE_SQL`).

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::bucket::Learned;
use super::QuotaNote;

/// A destination's learned quota as its row keeps it: what paces the
/// bucket, the limit the receiver named, and when it was learned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LearnedRow {
    pub pace: Learned,
    pub limit: Option<u64>,
    pub learned_at: DateTime<Utc>,
}

/// The row a note writes at the store's `now`: the reset is measured on
/// the store's clock, as every delay a receiver asks for is.
pub(super) fn learned(note: &QuotaNote, now: DateTime<Utc>) -> LearnedRow {
    LearnedRow {
        pace: Learned {
            remaining: note.quota.remaining as f64,
            resets_at: now
                .checked_add_signed(note.quota.resets_in)
                .unwrap_or(DateTime::<Utc>::MAX_UTC),
        },
        limit: note.quota.limit,
        learned_at: now,
    }
}

/// The notes a batch writes: the last one for each destination (the
/// newest response this process saw), in the order destinations first
/// appear.
pub(super) fn latest(notes: &[QuotaNote]) -> Vec<&QuotaNote> {
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut kept: Vec<&QuotaNote> = Vec::new();
    for note in notes {
        match at.get(note.destination.as_str()) {
            Some(&i) => kept[i] = note,
            None => {
                at.insert(note.destination.as_str(), kept.len());
                kept.push(note);
            }
        }
    }
    kept
}
