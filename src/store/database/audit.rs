//! The audit log on `Database`: who a handle acts as, and the `Audit`
//! trait passed to the backend.

use chrono::Duration;

use super::Database;
use crate::domain::{Actor, AuditFilter, AuditPage};
use crate::store::{Audit, StoreError};

impl Database {
    /// The same database (pool, key, clock) whose admin calls record
    /// `actor` in the audit log, each in the transaction of its action. A
    /// handle no one acts through records `system`. Cheap: the clone shares
    /// the pool.
    pub fn acting_as(&self, actor: Actor) -> Self {
        match self {
            Database::Postgres(pg) => Database::Postgres(pg.acting_as(actor)),
            Database::Sqlite(lite) => Database::Sqlite(lite.acting_as(actor)),
        }
    }
}

impl Audit for Database {
    async fn audit_entries(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> Result<AuditPage, StoreError> {
        on_store!(self, s => s.audit_entries(filter, before, limit).await)
    }

    async fn prune_audit(
        &self,
        scope: crate::store::AuditScope,
        older_than: Duration,
        batch_size: u32,
    ) -> Result<u64, StoreError> {
        on_store!(self, s => s.prune_audit(scope, older_than, batch_size).await)
    }
}
