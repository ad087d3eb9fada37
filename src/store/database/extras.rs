//! The calls a process makes on its database beside the `Store` trait's:
//! the schedule's status, export and import, the address policy's
//! refusals, and the payload key check. The shared rules (an imported
//! record's checks, the key's judgement) run here once, before the
//! backend is called.

use super::Database;
use crate::domain::DestinationId;
use crate::domain::{InvalidInput, Region, TaskId};
use crate::store::import_rules::{check_imported_destination, ImportCheck};
use crate::store::{payload_keys, postgres, KeyCount, Rekeyed};
use crate::store::{
    DestinationRecord, Imported, RegionCounts, RegionStatus, StatusReport, StoreError, TaskRecord,
};

impl Database {
    /// The status of one region, or of every region.
    pub async fn status(&self, region: Option<Region>) -> Result<StatusReport, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::status::status(pg, region).await,
            Database::Sqlite(lite) => lite.status(region).await,
        }
    }

    /// One region's tasks by state, counted exactly as `status` counts
    /// them, without the rest of the report.
    pub async fn region_counts(&self, region: Region) -> Result<RegionCounts, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::status::region_counts(pg, region).await,
            Database::Sqlite(lite) => lite.region_counts(region).await,
        }
    }

    /// Only what a runtime's gauges need, cheaply: one region's counts by
    /// state, its oldest eligible task and its expired leases.
    pub async fn queue(&self, region: Region) -> Result<RegionStatus, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::status::queue(pg, region).await,
            Database::Sqlite(lite) => lite.queue(region).await,
        }
    }

    /// Every destination, by id.
    pub async fn export_destinations(&self) -> Result<Vec<DestinationRecord>, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::transfer::destinations(pg).await,
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
            Database::Postgres(pg) => postgres::transfer::tasks(pg, after, limit).await,
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
            Database::Postgres(pg) => postgres::transfer::import_destinations(pg, records).await,
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
            Database::Postgres(pg) => postgres::transfer::import_tasks(pg, records).await,
            Database::Sqlite(lite) => lite.import_tasks(records).await,
        }
    }

    /// Records why the address policy refuses `id`, now.
    pub async fn mark_refused(&self, id: &DestinationId, why: String) -> Result<(), StoreError> {
        match self {
            Database::Postgres(pg) => postgres::refusals::mark_refused(pg, id, why).await,
            Database::Sqlite(lite) => lite.mark_refused(id.clone(), why).await,
        }
    }

    /// Refuses a key that is not recorded as one this database's payloads
    /// are sealed with; on a database that records none yet, records it.
    /// A key that passes seals the signing secrets still in clear.
    pub async fn check_payload_key(&self) -> Result<(), StoreError> {
        let (key, recorded) = match self {
            Database::Postgres(pg) => (&pg.key, postgres::payload_keys::record(pg).await?),
            Database::Sqlite(lite) => (lite.key(), lite.record_payload_key().await?),
        };
        payload_keys::judge(key, &recorded)?;
        self.seal_clear_secrets().await.map(|_| ())
    }

    /// Seals, with this process's key, every signing secret still in clear
    /// (from before secrets were sealed); returns how many it sealed.
    pub async fn seal_clear_secrets(&self) -> Result<u64, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::secrets::seal_clear(pg).await,
            Database::Sqlite(lite) => lite.seal_clear_secrets().await,
        }
    }

    /// How many payloads and secrets are sealed under each key.
    pub async fn sealed_counts(&self) -> Result<Vec<KeyCount>, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::rekey::counts(pg).await,
            Database::Sqlite(lite) => lite.sealed_counts().await,
        }
    }

    /// Re-seals, under the newest key of this process's ring, up to
    /// `limit` payloads after `after` (by reference) and up to `limit`
    /// secrets sealed under an older key, in one short transaction.
    pub async fn rekey_batch(
        &self,
        after: Option<uuid::Uuid>,
        limit: u32,
    ) -> Result<Rekeyed, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::rekey::batch(pg, after, limit).await,
            Database::Sqlite(lite) => lite.rekey_batch(after, limit).await,
        }
    }

    /// Forgets the recorded keys, other than the newest, that nothing is
    /// sealed under any more (so a ring without them starts); returns
    /// their fingerprints.
    pub async fn forget_unused_keys(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::rekey::forget_unused(pg).await,
            Database::Sqlite(lite) => lite.forget_unused_keys().await,
        }
    }
}
