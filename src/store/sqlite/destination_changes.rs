//! An operator's change of a destination, and its deletion, on SQLite:
//! each reads the row in the write transaction, applies the rule every
//! store applies (`rules::destination_change`) and writes it back; this
//! process's listeners are woken once it commits (another process on the
//! file reads the destination again when its cache of it runs out).

use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Double, Nullable, Text};
use diesel::sqlite::{Sqlite, SqliteConnection};
use diesel::RunQueryDsl;

use super::audit;
use super::destination_rows;
use super::headers;
use super::jobs;
use super::rows::micros;
use crate::domain::{
    AuditAction, Destination, DestinationChange, DestinationId, DestinationSettings,
    DisableOverrides, SettingValue,
};
use crate::store::contract::{check_new_job, Deleted, NewJob, StoreError};
use crate::store::rules::audit_entries::{self, destination_changed};
use crate::store::rules::destination_change::{live_refusal, plan, tombstone, DELETED_REASON};

pub(super) fn update(
    conn: &mut SqliteConnection,
    ctx: &super::store::Ctx,
    id: &DestinationId,
    change: &DestinationChange,
) -> Result<Destination, StoreError> {
    let current =
        destination_rows::shown(conn, id)?.ok_or_else(|| StoreError::no_destination(id))?;
    let stored = headers::records(conn, id.as_str())?;
    let plan = plan(&current, &stored, change, &ctx.key)?;
    write_settings(conn, id, &plan.settings, plan.overrides, ctx.now)?;
    diesel::sql_query("UPDATE destinations SET url = ? WHERE id = ?")
        .bind::<Text, _>(plan.url.as_str())
        .bind::<Text, _>(id.as_str())
        .execute(conn)?;
    if let Some(records) = &plan.headers {
        headers::replace(conn, id.as_str(), records)?;
    }
    let after = destination_rows::shown(conn, id)?.ok_or_else(|| StoreError::no_destination(id))?;
    let entry = destination_changed(AuditAction::DestinationUpdate, Some(&current), &after);
    audit::record(conn, ctx, entry)?;
    Ok(after)
}

/// Writes a destination's settings (headers apart) and disable thresholds.
pub(super) fn write_settings(
    conn: &mut SqliteConnection,
    id: &DestinationId,
    s: &DestinationSettings,
    overrides: DisableOverrides,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let settings = s.values();
    let assignments: Vec<String> = settings.iter().map(|(n, _)| format!("{n} = ?")).collect();
    let mut update = diesel::sql_query(format!(
        "UPDATE destinations SET {}, disable_after_seconds = ?, disable_after_failures = ?, \
         updated_at = ? WHERE id = ?",
        assignments.join(", ")
    ))
    .into_boxed::<Sqlite>();
    for (_, value) in settings {
        update = match value {
            SettingValue::Rate(v) => update.bind::<Nullable<Double>, _>(v),
            SettingValue::Whole(v) => update.bind::<Nullable<BigInt>, _>(v),
        };
    }
    update
        .bind::<Nullable<BigInt>, _>(overrides.after_seconds)
        .bind::<Nullable<BigInt>, _>(overrides.failures.map(i64::from))
        .bind::<BigInt, _>(micros(now))
        .bind::<Text, _>(id.as_str())
        .execute(conn)?;
    Ok(())
}

pub(super) fn delete(
    conn: &mut SqliteConnection,
    ctx: &super::store::Ctx,
    id: &DestinationId,
    cancel: Option<NewJob>,
) -> Result<Deleted, StoreError> {
    let now = ctx.now;
    let destination =
        destination_rows::shown(conn, id)?.ok_or_else(|| StoreError::no_destination(id))?;
    let live_tasks = destination_rows::live_tasks(conn, id, destination.region)?;
    let cancel = match cancel {
        _ if live_tasks == 0 => None,
        None => return Err(live_refusal(id, live_tasks)),
        Some(job) => {
            check_new_job(&job)?;
            Some(job)
        }
    };
    diesel::sql_query(
        "UPDATE destinations SET deleted_at = ?, enabled = 0, disabled_reason = ?, \
         disabled_at = ?, updated_at = ? WHERE id = ?",
    )
    .bind::<BigInt, _>(micros(now))
    .bind::<Text, _>(DELETED_REASON)
    .bind::<BigInt, _>(micros(now))
    .bind::<BigInt, _>(micros(now))
    .bind::<Text, _>(id.as_str())
    .execute(conn)?;
    // A deleted destination keeps no credential.
    diesel::sql_query("DELETE FROM destination_secrets WHERE destination_id = ?")
        .bind::<Text, _>(id.as_str())
        .execute(conn)?;
    headers::replace(conn, id.as_str(), &[])?;
    let after = tombstone(&destination, now);
    let entry = destination_changed(AuditAction::DestinationDelete, Some(&destination), &after);
    audit::record(conn, ctx, entry)?;
    let cancel_job = cancel
        .map(|job| jobs::record_job(conn, &job, now))
        .transpose()?;
    if let Some(job) = &cancel_job {
        audit::record(conn, ctx, audit_entries::job_created(job))?;
    }
    Ok(Deleted {
        destination,
        live_tasks,
        cancel_job,
    })
}
