//! What an import meets in the store it writes to, once every record has
//! passed its own checks (`imports`): a record already there is a repeat
//! or a `Conflict` naming what differs, and the store's fencing tokens move
//! past every imported one. The same answers from every backend.

use crate::domain::{Destination, Task};
use crate::store::contract::{
    DestinationRecord, SecretRecord, StoreError, StoredValue, TaskRecord,
};

/// The highest fencing token a record carries (its task's lease and its
/// attempts'), or `above` when that is higher: the importing store moves
/// its token counter past it, so a new lease always outranks an imported
/// one.
pub(crate) fn highest_token_of(record: &TaskRecord, above: i64) -> i64 {
    record
        .attempts
        .iter()
        .map(|a| a.lease_token)
        .chain(record.task.lease_token)
        .fold(above, i64::max)
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
