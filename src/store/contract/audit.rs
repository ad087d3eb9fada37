//! What the audit log's calls carry: the scope of a prune
//! ([`Upkeep::prune_audit`](super::Upkeep::prune_audit)) and the largest
//! page a read answers ([`Reports::audit_entries`](super::Reports::audit_entries)).
//! Entries are written by the admin calls of the other traits themselves,
//! each in its own transaction, as the handle it was called on acts (see
//! `Database::acting_as`).

use crate::domain::Region;

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
