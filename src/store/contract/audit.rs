//! `Audit`: reading the audit log and keeping it to its retention. Entries
//! are written by the admin calls of the other traits themselves, each in
//! its own transaction, as the handle it was called on acts (see
//! `Database::acting_as`): nothing here writes one.

use std::future::Future;

use chrono::Duration;

use crate::domain::{AuditFilter, AuditPage, Region};
use crate::store::StoreError;

/// Whose entries a prune of the audit log takes: each region's processes
/// keep their region's to their own retention, and the entries of no
/// region (tokens, keys, imports, what all regions share) are kept until an
/// operator's `remit prune`, so no process's shorter retention cuts
/// another's history short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditScope {
    /// The entries of one region.
    Region(Region),
    /// The entries of no region.
    Shared,
    /// Every entry.
    All,
}

impl AuditScope {
    /// Whether an entry of `region` is in scope.
    pub fn admits(&self, region: Option<Region>) -> bool {
        match self {
            AuditScope::Region(r) => region == Some(*r),
            AuditScope::Shared => region.is_none(),
            AuditScope::All => true,
        }
    }

    /// How the prune's own entry names what it took.
    pub fn label(&self) -> String {
        match self {
            AuditScope::Region(r) => r.as_str().to_owned(),
            AuditScope::Shared => "shared".to_owned(),
            AuditScope::All => "all".to_owned(),
        }
    }
}

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
    ) -> impl Future<Output = Result<AuditPage, StoreError>> + Send {
        self.audit_page(filter, before, limit.clamp(1, MAX_AUDIT_PAGE))
    }

    /// [`Audit::audit_entries`] with `limit` already within its bounds:
    /// what each store reads.
    fn audit_page(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> impl Future<Output = Result<AuditPage, StoreError>> + Send;

    /// Deletes the entries of `scope` written longer ago than `older_than`
    /// (on the store's clock), at most `batch_size` per transaction, until a
    /// batch comes back short; answers how many went. The only way an entry
    /// leaves the log, and it leaves one of its own (`audit.prune`, as this
    /// handle acts) when it took any.
    fn prune_audit(
        &self,
        scope: AuditScope,
        older_than: Duration,
        batch_size: u32,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}
