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
//! schedule's invariants before anything is written (`transfer_checks`).
//! Importing the same export again changes nothing.

use super::error::StoreError;
use super::transfer_checks::{check_imported_destinations, check_imported_tasks};
use super::transfer_records::{DestinationRecord, TaskRecord};

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
