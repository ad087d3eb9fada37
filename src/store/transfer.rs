//! Moving a schedule between stores (`remit export`, `remit import`): the
//! destinations with their secrets, pauses and buckets, then every task
//! with its sealed payload and its attempt log, in pages by task id.
//!
//! Nothing is decrypted or re-encrypted on the way: a payload stays sealed
//! under the key it was written with (the import's process needs the same
//! key to send it). Ids, idempotency keys, states, leases and attempt
//! numbers are kept as they are, so every task continues where it was. A
//! leased task keeps its lease, which is honoured until it expires and then
//! reclaimed like any other (never before its `not_before`); the importing
//! store's fencing tokens are moved past every imported one, so a new lease
//! always outranks an old one. Every record is checked against the
//! schedule's invariants before anything is written (`import_rules`).
//! Importing the same export again changes nothing.

use chrono::{DateTime, Utc};

use super::{SecretRecord, StoreError, StoredValue};
use crate::domain::{Attempt, Destination, Task};
use crate::payload_crypto::SealedPayload;

/// A destination as exported: what the API shows, plus what it keeps.
#[derive(Clone, PartialEq)]
pub struct DestinationRecord {
    pub destination: Destination,
    /// Every signing secret, ended ones included, oldest first, sealed.
    pub secrets: Vec<SecretRecord>,
    pub rate_tokens: Option<f64>,
    pub rate_refilled_at: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for DestinationRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DestinationRecord")
            .field("destination", &self.destination)
            .field("secrets", &self.secrets)
            .field("rate_tokens", &self.rate_tokens)
            .field("rate_refilled_at", &self.rate_refilled_at)
            .finish()
    }
}

/// A task as exported: its row, its sealed payload and its attempt log.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    pub task: Task,
    pub content_type: String,
    pub sealed: SealedPayload,
    pub attempts: Vec<Attempt>,
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Imported {
    pub added: u64,
    /// Already there, identical (a repeated import).
    pub already: u64,
}

/// The `Conflict` for an imported task whose id belongs to another
/// reminder.
pub(crate) fn id_taken(task: &Task) -> StoreError {
    StoreError::Conflict {
        what: format!("task {}", task.id),
        differs: "tenant_id, reminder_id".into(),
    }
}

/// The `Conflict` for an imported task whose (tenant, reminder) belongs to
/// another task.
pub(crate) fn taken(task: &Task) -> StoreError {
    StoreError::Conflict {
        what: format!(
            "task for tenant {} reminder {}",
            crate::domain::quoted(task.tenant_id.as_str()),
            crate::domain::quoted(task.reminder_id.as_str())
        ),
        differs: "id".into(),
    }
}

/// An imported destination that exists already: a repeat when region, URL
/// and secrets are the same (each of the record's secrets is one of the
/// destination's, by id, or by value for a secret an old export carried
/// in clear), a `Conflict` naming what differs otherwise.
pub(crate) fn same_imported_or_conflict(
    existing: &Destination,
    existing_secrets: &[SecretRecord],
    record: &DestinationRecord,
) -> Result<(), StoreError> {
    let d = &record.destination;
    let mut differs = Vec::new();
    if existing.region != d.region {
        differs.push("region");
    }
    if existing.url != d.url {
        differs.push("url");
    }
    let held = |s: &SecretRecord| {
        existing_secrets.iter().any(|e| {
            e.id == s.id
                || matches!((&e.value, &s.value), (StoredValue::Clear(a), StoredValue::Clear(b)) if a == b)
        })
    };
    if existing_secrets.len() != record.secrets.len() || !record.secrets.iter().all(held) {
        differs.push("secret");
    }
    if differs.is_empty() {
        Ok(())
    } else {
        Err(StoreError::Conflict {
            what: format!("destination {}", d.id),
            differs: differs.join(", "),
        })
    }
}
