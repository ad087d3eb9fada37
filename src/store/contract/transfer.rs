//! Moving a schedule between stores (`remit export`, `remit import`): the
//! destinations with their secrets, settings, headers, pauses and buckets
//! (a deleted one as its tombstone), then every task
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

use crate::store::rules::imports::{check_imported_destinations, check_imported_tasks};
use chrono::{DateTime, Utc};

use crate::domain::{Attempt, Destination, Task};
use crate::payload_crypto::SealedPayload;
use crate::store::{HeaderRecord, SecretRecord, StoreError};

/// A destination as exported: what the API shows, plus what it keeps.
#[derive(Clone, PartialEq)]
pub struct DestinationRecord {
    pub destination: Destination,
    /// Every signing secret, ended ones included, oldest first, sealed.
    pub secrets: Vec<SecretRecord>,
    pub rate_tokens: Option<f64>,
    pub rate_refilled_at: Option<DateTime<Utc>>,
    /// Its custom headers' rows, in order, a secret's value still sealed
    /// (`destination.settings` carries its other settings, and the headers
    /// as shown).
    pub headers: Vec<HeaderRecord>,
    /// When it was deleted: a tombstone travels too, so the tasks that
    /// ended under it keep their destination in the importing store.
    pub deleted_at: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for DestinationRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DestinationRecord")
            .field("destination", &self.destination)
            .field("secrets", &self.secrets)
            .field("rate_tokens", &self.rate_tokens)
            .field("rate_refilled_at", &self.rate_refilled_at)
            .field("headers", &self.headers)
            .field("deleted_at", &self.deleted_at)
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

/// The content type the record of an erased payload carries: the payload's
/// row, its content type with it, is gone.
pub const ERASED_CONTENT_TYPE: &str = "application/octet-stream";

impl TaskRecord {
    /// The record of a task whose payload an operator erased: no sealed
    /// bytes (every part empty) and [`ERASED_CONTENT_TYPE`]; the task's
    /// `payload_erased_at` says so, and an import writes no payload for it.
    pub fn erased(task: Task, attempts: Vec<Attempt>) -> Self {
        Self {
            task,
            content_type: ERASED_CONTENT_TYPE.to_owned(),
            sealed: SealedPayload {
                key_fingerprint: Vec::new(),
                nonce: Vec::new(),
                ciphertext: Vec::new(),
            },
            attempts,
        }
    }

    /// Whether the record carries a payload to write: not once erased.
    pub fn has_payload(&self) -> bool {
        self.task.payload_erased_at.is_none()
    }
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Imported {
    pub added: u64,
    /// Already there, identical (a repeated import).
    pub already: u64,
}

/// `remit export` and `import`: every destination and task, with payloads
/// (sealed as stored), attempts and signing secrets, read in pages and
/// written back whole.
pub trait Transfer: Sync {
    /// Every destination, by id.
    fn export_destinations(
        &self,
    ) -> impl std::future::Future<Output = Result<Vec<DestinationRecord>, StoreError>> + Send;

    /// Up to `limit` tasks after `after`, by id, with payloads and attempts.
    fn export_tasks(
        &self,
        after: Option<crate::domain::TaskId>,
        limit: u32,
    ) -> impl std::future::Future<Output = Result<Vec<TaskRecord>, StoreError>> + Send;

    /// Adds the destinations in one transaction, once each is checked
    /// (`check_imported_destinations`). One that exists with the same id,
    /// region, URL and secret is left as it is; one that differs is a
    /// `Conflict`, and nothing is written.
    fn import_destinations(
        &self,
        records: Vec<DestinationRecord>,
    ) -> impl std::future::Future<Output = Result<Imported, StoreError>> + Send {
        async move {
            check_imported_destinations(&records)?;
            self.import_checked_destinations(records).await
        }
    }

    /// [`Transfer::import_destinations`] once the records passed their
    /// check: what each store writes.
    fn import_checked_destinations(
        &self,
        records: Vec<DestinationRecord>,
    ) -> impl std::future::Future<Output = Result<Imported, StoreError>> + Send;

    /// Adds the tasks, their payloads and attempts in one transaction, and
    /// moves the fencing tokens past theirs, once every record is checked
    /// (`check_imported_tasks`: one that breaks an invariant is `Invalid`,
    /// naming the task and the field, and nothing is written). A task
    /// already there with the same id is left as it is; another task with
    /// the same (tenant, reminder), or another reminder with the same id,
    /// is a `Conflict`, and nothing is written.
    fn import_tasks(
        &self,
        records: Vec<TaskRecord>,
    ) -> impl std::future::Future<Output = Result<Imported, StoreError>> + Send {
        async move {
            check_imported_tasks(&records)?;
            self.import_checked_tasks(records).await
        }
    }

    /// [`Transfer::import_tasks`] once the records passed their check: what
    /// each store writes.
    fn import_checked_tasks(
        &self,
        records: Vec<TaskRecord>,
    ) -> impl std::future::Future<Output = Result<Imported, StoreError>> + Send;
}
