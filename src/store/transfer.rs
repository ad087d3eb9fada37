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

use super::import_rules::{check_imported_destination, ImportCheck};
use super::{Database, StoreError};
use crate::domain::{Attempt, Destination, InvalidInput, Task, TaskId};
use crate::payload_crypto::SealedPayload;

/// A destination as exported: what the API shows, plus what it keeps.
#[derive(Clone, PartialEq)]
pub struct DestinationRecord {
    pub destination: Destination,
    pub signing_secret: Option<String>,
    pub rate_tokens: Option<f64>,
    pub rate_refilled_at: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for DestinationRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DestinationRecord")
            .field("destination", &self.destination)
            .field(
                "signing_secret",
                &self.signing_secret.as_ref().map(|_| "<redacted>"),
            )
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

impl Database {
    /// Every destination, by id.
    pub async fn export_destinations(&self) -> Result<Vec<DestinationRecord>, StoreError> {
        match self {
            Database::Postgres(pg) => super::pg_transfer::destinations(pg).await,
            Database::Sqlite(lite) => lite.export_destinations().await,
        }
    }

    /// Up to `limit` tasks after `after`, by id, with payloads and attempts.
    pub async fn export_tasks(
        &self,
        after: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        match self {
            Database::Postgres(pg) => super::pg_transfer::tasks(pg, after, limit).await,
            Database::Sqlite(lite) => lite.export_tasks(after, limit).await,
        }
    }

    /// Adds the destinations in one transaction. One that exists with the
    /// same id, region, URL and secret is left as it is; one that differs
    /// is a `Conflict`, and nothing is written.
    pub async fn import_destinations(
        &self,
        records: Vec<DestinationRecord>,
    ) -> Result<Imported, StoreError> {
        for record in &records {
            check_imported_destination(record).map_err(|e| {
                InvalidInput::new(
                    e.field,
                    format!("destination {}: {}", record.destination.id, e.reason),
                )
            })?;
        }
        match self {
            Database::Postgres(pg) => super::pg_transfer::import_destinations(pg, records).await,
            Database::Sqlite(lite) => lite.import_destinations(records).await,
        }
    }

    /// Adds the tasks, their payloads and attempts in one transaction, and
    /// moves the fencing tokens past theirs. Every record is checked first
    /// (`import_rules`): one that breaks an invariant is `Invalid`, naming
    /// the task and the field, and nothing is written. A task already
    /// there with the same id is left as it is; another task with the same
    /// (tenant, reminder), or another reminder with the same id, is a
    /// `Conflict`, and nothing is written.
    pub async fn import_tasks(&self, records: Vec<TaskRecord>) -> Result<Imported, StoreError> {
        let mut check = ImportCheck::new("record");
        for (i, record) in records.iter().enumerate() {
            check.task(record, i + 1).map_err(|e| {
                InvalidInput::new(e.field, format!("task {}: {}", record.task.id, e.reason))
            })?;
        }
        match self {
            Database::Postgres(pg) => super::pg_transfer::import_tasks(pg, records).await,
            Database::Sqlite(lite) => lite.import_tasks(records).await,
        }
    }
}

/// The `Conflict` for an imported task whose id belongs to another
/// reminder.
pub(super) fn id_taken(task: &Task) -> StoreError {
    StoreError::Conflict {
        what: format!("task {}", task.id),
        differs: "tenant_id, reminder_id".into(),
    }
}

/// The `Conflict` for an imported task whose (tenant, reminder) belongs to
/// another task.
pub(super) fn taken(task: &Task) -> StoreError {
    StoreError::Conflict {
        what: format!(
            "task for tenant {} reminder {}",
            crate::domain::quoted(task.tenant_id.as_str()),
            crate::domain::quoted(task.reminder_id.as_str())
        ),
        differs: "id".into(),
    }
}
