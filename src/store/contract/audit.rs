//! `Audit`: reading the audit log and keeping it to its retention. Entries
//! are written by the admin calls of the other traits themselves, each in
//! its own transaction, as the handle it was called on acts (see
//! `Database::acting_as`): nothing here writes one.

use std::future::Future;

use chrono::Duration;

use crate::domain::{AuditFilter, AuditPage};
use crate::store::StoreError;

/// The most entries one page holds.
pub const MAX_AUDIT_PAGE: u32 = 500;

pub trait Audit: Sync {
    /// The entries `filter` admits, newest first: up to `limit` (held
    /// within 1..=[`MAX_AUDIT_PAGE`]) with an id below `before` when
    /// given, and the cursor of the next page when there is one.
    fn audit_entries(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> impl Future<Output = Result<AuditPage, StoreError>> + Send;

    /// Deletes the entries written longer ago than `older_than` (on the
    /// store's clock), at most `batch_size` per transaction, until a batch
    /// comes back short; answers how many went. The only way an entry
    /// leaves the log.
    fn prune_audit(
        &self,
        older_than: Duration,
        batch_size: u32,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}
