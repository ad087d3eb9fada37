//! An audit entry's columns as every store reads them back (SQLite turns
//! its integers into instants first), and the columns it writes for its
//! actor.

use chrono::{DateTime, Utc};

use super::columns::{corrupt, region};
use crate::domain::{Actor, AuditAction, AuditEntry, AuditTarget, TargetKind};
use crate::store::contract::StoreError;

pub(in crate::store) struct AuditColumns {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor_kind: String,
    pub actor_id: Option<String>,
    pub actor_name: Option<String>,
    pub action: String,
    pub target_kind: String,
    pub target_id: String,
    pub region: Option<String>,
    /// JSON text.
    pub before: Option<String>,
    pub after: Option<String>,
}

impl AuditColumns {
    pub fn into_entry(self) -> Result<AuditEntry, StoreError> {
        let json = |column, text: Option<String>| {
            text.map(|t| serde_json::from_str(&t).map_err(|e| corrupt(column, e)))
                .transpose()
        };
        Ok(AuditEntry {
            id: self.id,
            at: self.at,
            actor: Actor::from_columns(&self.actor_kind, self.actor_id, self.actor_name)
                .ok_or_else(|| corrupt("audit_log.actor_kind", self.actor_kind))?,
            action: AuditAction::parse(&self.action)
                .ok_or_else(|| corrupt("audit_log.action", &self.action))?,
            target: AuditTarget {
                kind: TargetKind::parse(&self.target_kind)
                    .ok_or_else(|| corrupt("audit_log.target_kind", &self.target_kind))?,
                id: self.target_id,
            },
            region: self
                .region
                .map(|r| region("audit_log.region", &r))
                .transpose()?,
            before: json("audit_log.before", self.before)?,
            after: json("audit_log.after", self.after)?,
        })
    }
}

/// The JSON text a settings value is stored as.
pub(in crate::store) fn json_text(value: &Option<serde_json::Value>) -> Option<String> {
    value.as_ref().map(serde_json::Value::to_string)
}
