//! What an imported row must be before any store writes it (`remit
//! import`, [`Transfer::import_tasks`](super::Transfer::import_tasks)):
//! every promise the schedule makes about its own rows, checked one record
//! at a time, so a hand-edited or damaged export is refused with the field
//! that is wrong and what is accepted instead of being written and then
//! breaking a claim, a fencing token or a receiver's deduplication.
//!
//! - Times lie between [`EARLIEST`] and [`LATEST`]: what every store can
//!   hold and what remit itself may write (a deadline plus a long retry
//!   horizon can reach the latest instant remit represents; PostgreSQL
//!   holds nothing much before year 0).
//! - State and lease agree: `leased` ⇔ a lease token, holder and expiry;
//!   terminal ⇔ `finalized_at`; `delivered` ⇔ `delivered_at`; `failed` ⇔
//!   a `failure_reason`; `cancelled` ⇒ who cancelled it, and when. A
//!   lease ends after `not_before` (the claim takes a row only once its
//!   deadline has passed).
//! - Counts: a `leased` row is an attempt under way, so its
//!   `attempt_count` is at least 1 (a reclaim logs that attempt as
//!   abandoned, and attempt numbers start at 1);
//!   `attempts_before_replay` lies between 0 and `attempt_count`.
//! - Fencing tokens (the task's and every attempt's) lie between 1 and
//!   [`MAX_IMPORTED_LEASE_TOKEN`], so moving the store's token counter
//!   past them leaves it room for ever.
//! - The idempotency key is the one derived from (tenant, reminder), or,
//!   for a task scheduled before keys were derived, the one derived from
//!   its own task id. Either way no other reminder can carry it: (tenant,
//!   reminder) and the task id are unique, and the two forms never meet.
//! - An ordering key, when present, is one the API would take: its type
//!   (`OrderingKey`) is only made from text that passes those rules, so a
//!   file's key is checked as its line is read (`remit import` names the
//!   line and `ordering_key`). The key travels unchanged, and a line's
//!   order (`not_before`, then task id) with it.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};

use super::error::StoreError;
use super::headers::StoredHeader;
use super::transfer_records::DestinationRecord;
use super::transfer_records::TaskRecord;
use crate::domain::{
    idempotency_key, legacy_idempotency_key, quoted, InvalidInput, ReminderId, Task, TaskId,
    TaskState, TenantId,
};

/// The highest fencing token an import accepts: 2^53. Tokens are drawn one
/// per claim, so a real store is far below it; above it a crafted token
/// (say `i64::MAX`) would exhaust the store's token counter once moved
/// past it. 2^53 also survives any JSON reader exactly.
pub const MAX_IMPORTED_LEASE_TOKEN: i64 = 1 << 53;

/// The earliest time an import accepts: 0000-01-01T00:00:00Z.
pub const EARLIEST: DateTime<Utc> = match NaiveDate::from_ymd_opt(0, 1, 1) {
    Some(day) => day.and_time(chrono::NaiveTime::MIN).and_utc(),
    None => DateTime::<Utc>::MIN_UTC,
};

/// The latest time an import accepts: the latest remit represents
/// (+262142-12-31T23:59:59.999999999Z), which every store holds.
pub const LATEST: DateTime<Utc> = DateTime::<Utc>::MAX_UTC;

fn time(field: &'static str, at: DateTime<Utc>) -> Result<(), InvalidInput> {
    if (EARLIEST..=LATEST).contains(&at) {
        return Ok(());
    }
    Err(InvalidInput::new(
        field,
        format!("{at} is out of range: times must lie between {EARLIEST} and {LATEST}"),
    ))
}

fn token(field: &'static str, token: i64) -> Result<(), InvalidInput> {
    if (1..=MAX_IMPORTED_LEASE_TOKEN).contains(&token) {
        return Ok(());
    }
    Err(InvalidInput::new(
        field,
        format!("{token} is out of range: fencing tokens lie between 1 and 2^53 ({MAX_IMPORTED_LEASE_TOKEN})"),
    ))
}

/// `present` must be `expected`: the state `state` needs `field` (or
/// forbids it).
fn tied(
    field: &'static str,
    present: bool,
    expected: bool,
    state: TaskState,
) -> Result<(), InvalidInput> {
    match (present, expected) {
        (true, false) => Err(InvalidInput::new(
            field,
            format!("must be null in state {}", quoted(state.as_str())),
        )),
        (false, true) => Err(InvalidInput::new(
            field,
            format!("is required in state {}", quoted(state.as_str())),
        )),
        _ => Ok(()),
    }
}

/// A waiting change and an erased payload as only remit's own changes
/// leave them: a waiting cancel records who asked, and a task whose
/// payload is gone has ended or waits to be cancelled.
fn changes(t: &Task) -> Result<(), InvalidInput> {
    use crate::domain::WaitingChange;
    if t.waiting_change == Some(WaitingChange::Cancel) && t.cancelled.is_none() {
        return Err(InvalidInput::new(
            "cancelled_at",
            "is required with a waiting cancel",
        ));
    }
    let live = !t.state.is_terminal();
    if t.payload_erased_at.is_some() && live && t.waiting_change != Some(WaitingChange::Cancel) {
        return Err(InvalidInput::new(
            "payload_erased_at",
            format!(
                "a task in state {} must have its payload, unless a cancel waits on it",
                quoted(t.state.as_str())
            ),
        ));
    }
    Ok(())
}

/// Checks one exported task against the schedule's invariants.
pub fn check_imported_task(record: &TaskRecord) -> Result<(), InvalidInput> {
    let t = &record.task;
    times(t)?;
    lease(t)?;
    let terminal = t.state.is_terminal();
    tied("finalized_at", t.finalized_at.is_some(), terminal, t.state)?;
    let delivered = t.state == TaskState::Delivered;
    tied("delivered_at", t.delivered_at.is_some(), delivered, t.state)?;
    let failed = t.state == TaskState::Failed;
    tied(
        "failure_reason",
        t.failure_reason.is_some(),
        failed,
        t.state,
    )?;
    if t.state == TaskState::Cancelled && t.cancelled.is_none() {
        return Err(InvalidInput::new(
            "cancelled_at",
            format!("is required in state {}", quoted(t.state.as_str())),
        ));
    }
    changes(t)?;
    counts(t)?;
    key(t)?;
    if record.content_type.trim().is_empty() {
        return Err(InvalidInput::new("content_type", "must not be empty"));
    }
    for (i, a) in record.attempts.iter().enumerate() {
        let n = i + 1;
        let at = |e: InvalidInput| InvalidInput::new(e.field, format!("attempt {n}: {}", e.reason));
        if a.task_id != t.id {
            return Err(at(InvalidInput::new(
                "attempts.task_id",
                "must be the task's id",
            )));
        }
        if a.attempt_number < 1 {
            return Err(at(InvalidInput::new(
                "attempts.attempt_number",
                "must be at least 1",
            )));
        }
        token("attempts.lease_token", a.lease_token).map_err(at)?;
        let o = &a.observed;
        for (field, value) in [
            ("attempts.started_at", o.started_at),
            ("attempts.received_at", o.received_at),
            ("attempts.retry_after_deadline", o.retry_after_deadline),
            ("attempts.next_available_at", a.next_available_at),
            ("attempts.recorded_at", Some(a.recorded_at)),
        ] {
            value.map_or(Ok(()), |v| time(field, v)).map_err(at)?;
        }
    }
    Ok(())
}

fn times(t: &Task) -> Result<(), InvalidInput> {
    for (field, value) in [
        ("not_before", Some(t.not_before)),
        ("available_at", Some(t.available_at)),
        ("retry_horizon_at", Some(t.retry_horizon_at)),
        ("lease_expires_at", t.lease_expires_at),
        ("created_at", Some(t.created_at)),
        ("updated_at", Some(t.updated_at)),
        ("delivered_at", t.delivered_at),
        ("finalized_at", t.finalized_at),
    ] {
        value.map_or(Ok(()), |v| time(field, v))?;
    }
    if t.available_at < t.not_before {
        return Err(InvalidInput::new(
            "available_at",
            "must not be before not_before",
        ));
    }
    if t.retry_horizon_at < t.not_before {
        return Err(InvalidInput::new(
            "retry_horizon_at",
            "must not be before not_before",
        ));
    }
    Ok(())
}

fn lease(t: &Task) -> Result<(), InvalidInput> {
    let leased = t.state == TaskState::Leased;
    tied("lease_token", t.lease_token.is_some(), leased, t.state)?;
    let owner = t
        .lease_owner
        .as_deref()
        .is_some_and(|o| !o.trim().is_empty());
    if t.lease_owner.is_some() && !owner {
        return Err(InvalidInput::new("lease_owner", "must not be empty"));
    }
    tied("lease_owner", owner, leased, t.state)?;
    tied(
        "lease_expires_at",
        t.lease_expires_at.is_some(),
        leased,
        t.state,
    )?;
    if let Some(value) = t.lease_token {
        token("lease_token", value)?;
    }
    if t.lease_expires_at.is_some_and(|at| at < t.not_before) {
        return Err(InvalidInput::new(
            "lease_expires_at",
            "must not be before not_before: a task is leased only once its not_before has passed",
        ));
    }
    Ok(())
}

fn counts(t: &Task) -> Result<(), InvalidInput> {
    let least = i32::from(t.state == TaskState::Leased);
    if t.attempt_count < least {
        return Err(InvalidInput::new(
            "attempt_count",
            if least == 1 {
                "must be at least 1 in state \"leased\": the lease is an attempt under way"
            } else {
                "must be at least 0"
            },
        ));
    }
    if !(0..=t.attempt_count).contains(&t.attempts_before_replay) {
        return Err(InvalidInput::new(
            "attempts_before_replay",
            "must lie between 0 and attempt_count",
        ));
    }
    Ok(())
}

fn key(t: &Task) -> Result<(), InvalidInput> {
    let derived = idempotency_key(&t.tenant_id, &t.reminder_id);
    if t.idempotency_key == derived || t.idempotency_key == legacy_idempotency_key(t.id) {
        return Ok(());
    }
    Err(InvalidInput::new(
        "idempotency_key",
        format!(
            "must be {}, the key of tenant {} reminder {} (or, for a task scheduled \
             before keys were derived, {}, its task id's)",
            quoted(&derived),
            quoted(t.tenant_id.as_str()),
            quoted(t.reminder_id.as_str()),
            quoted(&legacy_idempotency_key(t.id))
        ),
    ))
}

/// Checks one exported destination: its bucket and times.
pub fn check_imported_destination(record: &DestinationRecord) -> Result<(), InvalidInput> {
    if record
        .rate_tokens
        .is_some_and(|t| !t.is_finite() || t < 0.0)
    {
        return Err(InvalidInput::new(
            "rate_tokens",
            "must be a finite number of at least 0",
        ));
    }
    if record.deleted_at.is_some()
        && (record.destination.enabled || !record.secrets.is_empty() || !record.headers.is_empty())
    {
        // A tombstone is disabled and keeps no credential; one that were
        // enabled would have its tasks claimed, and no send find it.
        return Err(InvalidInput::new(
            "deleted_at",
            "a deleted destination must be disabled, without secrets or headers",
        ));
    }
    let health = &record.destination.health;
    for (field, value) in [
        ("paused_until", record.destination.paused_until),
        ("rate_refilled_at", record.rate_refilled_at),
        ("failure_streak_since", health.failure_streak_since),
        ("disabled_at", health.disabled_at),
    ] {
        value.map_or(Ok(()), |v| time(field, v))?;
    }
    if (health.failure_streak == 0) != health.failure_streak_since.is_none() {
        return Err(InvalidInput::new(
            "failure_streak_since",
            "must be given exactly when failure_streak is above 0",
        ));
    }
    if health.failure_streak > i32::MAX as u32 {
        return Err(InvalidInput::new(
            "failure_streak",
            format!("must be at most {}", i32::MAX),
        ));
    }
    record
        .deleted_at
        .map_or(Ok(()), |v| time("deleted_at", v))?;
    check_imported_settings(record)
}

/// The settings within the bounds a change takes, and each header one a
/// change could have written: a name remit does not reserve, given once,
/// and a plain value of visible ASCII (a sealed one is opened only for a
/// send).
fn check_imported_settings(record: &DestinationRecord) -> Result<(), InvalidInput> {
    use crate::domain::{CustomHeader, DestinationChange};
    let s = &record.destination.settings;
    let headers = record
        .headers
        .iter()
        .enumerate()
        .map(|(i, h)| match &h.value {
            StoredHeader::Plain(v) => CustomHeader::new(i, &h.name, Some(v.clone()), false),
            StoredHeader::Sealed { .. } => CustomHeader::new(i, &h.name, None, true),
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(i) = headers
        .iter()
        .zip(&record.headers)
        .position(|(c, h)| c.name != h.name)
    {
        return Err(InvalidInput::new(
            crate::domain::header_field(i, "name"),
            "must be lowercase",
        ));
    }
    DestinationChange {
        headers: Some(headers),
        ..DestinationChange::setting_all(s)
    }
    .validate()
}

/// The checks that span the records of one import: no two tasks share an
/// id, a (tenant, reminder) or a payload. `unit` names what positions
/// count ("line" for a file, "record" for a batch).
#[derive(Debug)]
pub struct ImportCheck {
    unit: &'static str,
    ids: HashMap<TaskId, usize>,
    reminders: HashMap<(TenantId, ReminderId), usize>,
    payloads: HashMap<uuid::Uuid, usize>,
}

impl ImportCheck {
    pub fn new(unit: &'static str) -> Self {
        Self {
            unit,
            ids: HashMap::new(),
            reminders: HashMap::new(),
            payloads: HashMap::new(),
        }
    }

    /// Checks the task at `position` on its own ([`check_imported_task`]) and
    /// against those before it.
    pub fn task(&mut self, record: &TaskRecord, position: usize) -> Result<(), InvalidInput> {
        check_imported_task(record)?;
        let t = &record.task;
        let unit = self.unit;
        let seen = |field: &'static str, before: Option<usize>| match before {
            Some(other) => Err(InvalidInput::new(
                field,
                format!("is the same as on {unit} {other}: each task of an import has its own"),
            )),
            None => Ok(()),
        };
        seen("id", self.ids.insert(t.id, position))?;
        seen(
            "reminder_id",
            self.reminders
                .insert((t.tenant_id.clone(), t.reminder_id.clone()), position),
        )?;
        seen("payload_ref", self.payloads.insert(t.payload_ref, position))
    }
}

/// Every destination of an import checked before any store writes one:
/// the first that breaks a rule is `Invalid`, naming the destination and
/// the field. Each backend's `import_destinations` starts here.
pub(crate) fn check_imported_destinations(records: &[DestinationRecord]) -> Result<(), StoreError> {
    for record in records {
        check_imported_destination(record).map_err(|e| {
            InvalidInput::new(
                e.field,
                format!("destination {}: {}", record.destination.id, e.reason),
            )
        })?;
    }
    Ok(())
}

/// Every task of an import checked on its own and against the others
/// ([`ImportCheck`]) before any store writes one: the first that breaks a
/// rule is `Invalid`, naming the task and the field. Each backend's
/// `import_tasks` starts here.
pub(crate) fn check_imported_tasks(records: &[TaskRecord]) -> Result<(), StoreError> {
    let mut check = ImportCheck::new("record");
    for (i, record) in records.iter().enumerate() {
        check.task(record, i + 1).map_err(|e| {
            InvalidInput::new(e.field, format!("task {}: {}", record.task.id, e.reason))
        })?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "transfer_checks_tests.rs"]
mod tests;
