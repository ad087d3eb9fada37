//! What a receiver announced of its quota, as every store records it: the
//! rule that turns a response's announcement into the destination's
//! learned quota, written once. The token take paces by it (`bucket.rs`,
//! and PostgreSQL's `TAKE_SQL`); PostgreSQL's `LEARN_SQL` states the same
//! rule in SQL, and the conformance suite holds the stores to it.
//!
//! Two facts place an answer among the requests: the number of the token
//! its request was sent with (`QuotaNote::token`), and the destination's
//! count of tokens granted (`Bucket::granted`), both kept in the
//! database, so they hold across every process of the region.
//! - What remains is what the receiver announced less the tokens granted
//!   after the answered request's own: those requests went out after it,
//!   so the receiver had not counted them when it answered (or they are
//!   about to go). Without this every answer would hand back the quota
//!   the requests on their way have already spent.
//! - An announcement placed before the stored one (a lower token number:
//!   a slow answer to an earlier request) is an older view of the
//!   receiver's window and is ignored; of two with the same number, the
//!   later write wins. Numbers follow the order tokens were granted, not
//!   the order requests went out (a process may hold a token while
//!   another's later ones go), so an answer to a request sent after the
//!   stored quota was learned (on the store's clock) is fresher whatever
//!   its number: the receiver answered it after the stored one.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use crate::store::contract::QuotaNote;
use crate::store::rules::bucket::{Learned, Renewal};

/// A destination's learned quota as its row keeps it: what paces the
/// bucket, the limit the receiver named, when it was learned, and the
/// number of the token whose answer announced it (none for a quota
/// learned before tokens were numbered).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::store) struct LearnedRow {
    pub pace: Learned,
    pub limit: Option<u64>,
    pub learned_at: DateTime<Utc>,
    pub token: Option<u64>,
}

/// Whether a note replaces the stored quota (`stored`: the token its
/// answered request was sent with, and when it was learned): not when its
/// own request was sent with an earlier token, before that was learned.
pub(in crate::store) fn supersedes(
    note: &QuotaNote,
    stored: Option<(Option<u64>, DateTime<Utc>)>,
) -> bool {
    match stored {
        None | Some((None, _)) => true,
        Some((Some(token), learned_at)) => note.token >= token || note.sent_at > learned_at,
    }
}

/// The row a note writes at the store's `now`, when the bucket has granted
/// `granted` tokens so far: what was announced less the tokens granted
/// after the answered request's, the reset measured on the store's clock,
/// as every delay a receiver asks for is, and the window it renews to when
/// the receiver named its limit and window.
/// The token kept is the highest seen (`stored`, or the note's): a note
/// that wins by when it was sent does not lower it, so a slower answer to
/// a request sent before both cannot pass for the newest by its number.
pub(in crate::store) fn learned(
    note: &QuotaNote,
    granted: u64,
    stored: Option<u64>,
    now: DateTime<Utc>,
) -> LearnedRow {
    let since = granted.saturating_sub(note.token);
    LearnedRow {
        pace: Learned {
            remaining: note.quota.remaining.saturating_sub(since) as f64,
            resets_at: now
                .checked_add_signed(note.quota.resets_in)
                .unwrap_or(DateTime::<Utc>::MAX_UTC),
            renews: note
                .quota
                .limit
                .zip(note.quota.window)
                .map(|(limit, window)| Renewal { limit, window }),
        },
        limit: note.quota.limit,
        learned_at: now,
        token: Some(stored.map_or(note.token, |t| t.max(note.token))),
    }
}

/// The notes a batch writes: for each destination the one that went out
/// last (by when it was sent, then by token number; of equals, the last),
/// in the order destinations first appear.
pub(in crate::store) fn latest(notes: &[QuotaNote]) -> Vec<&QuotaNote> {
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut kept: Vec<&QuotaNote> = Vec::new();
    for note in notes {
        match at.get(note.destination.as_str()) {
            Some(&i) if (kept[i].sent_at, kept[i].token) <= (note.sent_at, note.token) => {
                kept[i] = note
            }
            Some(_) => {}
            None => {
                at.insert(note.destination.as_str(), kept.len());
                kept.push(note);
            }
        }
    }
    kept
}
