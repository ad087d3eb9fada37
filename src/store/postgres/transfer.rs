//! Export and import on PostgreSQL (see `transfer`).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::tables::enums::{OutcomeColumn, StateColumn};
use super::tables::rows::{settings_columns, AttemptRow, DestinationRow, PayloadRow, TaskRow};
use super::tables::schema::{attempts, destinations, payloads, tasks};
use super::{audit, destinations::headers, destinations::secrets};
use crate::domain::{Attempt, Task, TaskId};
use crate::store::contract::{
    DestinationRecord, HeaderRecord, Imported, StoreError, TaskRecord, Transfer,
};
use crate::store::postgres::store::PgStore;
use crate::store::rules::audit_entries;
use crate::store::rules::import_conflicts::{
    highest_token_of, id_taken, same_imported_or_conflict, taken,
};

pub(in crate::store) async fn destinations(
    store: &PgStore,
) -> Result<Vec<DestinationRecord>, StoreError> {
    let mut conn = store.conn().await?;
    type Exported = (
        DestinationRow,
        Option<f64>,
        Option<DateTime<Utc>>,
        Option<DateTime<Utc>>,
    );
    let rows: Vec<Exported> = destinations::table
        .order(destinations::id)
        .select((
            DestinationRow::as_select(),
            destinations::rate_tokens,
            destinations::rate_refilled_at,
            destinations::deleted_at,
        ))
        .load(&mut conn)
        .await?;
    let ids: Vec<&str> = rows.iter().map(|(row, ..)| row.id.as_str()).collect();
    let mut secrets = secrets::all_records(&mut conn, &ids).await?;
    let mut headers = headers::records(&mut conn, &ids).await?;
    rows.into_iter()
        .map(|(row, rate_tokens, rate_refilled_at, deleted_at)| {
            let secrets = secrets.remove(&row.id).unwrap_or_default();
            let headers = headers.remove(&row.id).unwrap_or_default();
            let mut destination: crate::domain::Destination = row.try_into()?;
            destination.settings.headers = headers.iter().map(HeaderRecord::shown).collect();
            Ok(DestinationRecord {
                destination,
                secrets,
                rate_tokens,
                rate_refilled_at,
                headers,
                deleted_at,
            })
        })
        .collect()
}

pub(in crate::store) async fn tasks(
    store: &PgStore,
    after: Option<TaskId>,
    limit: u32,
) -> Result<Vec<TaskRecord>, StoreError> {
    let mut conn = store.conn().await?;
    // A left join: an erased task has no payload row.
    let rows: Vec<(TaskRow, Option<PayloadRow>)> = tasks::table
        .left_join(payloads::table)
        .filter(tasks::id.gt(after.map_or(uuid::Uuid::nil(), |id| id.0)))
        .order(tasks::id)
        .limit(i64::from(limit))
        .select((TaskRow::as_select(), Option::<PayloadRow>::as_select()))
        .load(&mut conn)
        .await?;
    let ids: Vec<uuid::Uuid> = rows.iter().map(|(t, _)| t.id).collect();
    let logged: Vec<AttemptRow> = attempts::table
        .filter(attempts::task_id.eq_any(&ids))
        .order((attempts::task_id, attempts::id))
        .select(AttemptRow::as_select())
        .load(&mut conn)
        .await?;
    let mut logged: Vec<Attempt> = logged
        .into_iter()
        .map(Attempt::try_from)
        .collect::<Result<_, _>>()?;
    rows.into_iter()
        .map(|(task, payload)| {
            let task = Task::try_from(task)?;
            let mine = logged.iter().take_while(|a| a.task_id == task.id).count();
            let attempts = logged.drain(..mine).collect();
            match (payload, task.payload_erased_at) {
                (_, Some(_)) => Ok(TaskRecord::erased(task, attempts)),
                (Some(payload), None) => Ok(TaskRecord {
                    task,
                    content_type: payload.content_type.clone(),
                    sealed: payload.into(),
                    attempts,
                }),
                (None, None) => Err(StoreError::NotFound {
                    what: "payload",
                    id: task.payload_ref.to_string(),
                }),
            }
        })
        .collect()
}

pub(in crate::store) async fn import_destinations(
    store: &PgStore,
    records: Vec<DestinationRecord>,
) -> Result<Imported, StoreError> {
    let ids: Vec<String> = records
        .iter()
        .map(|r| r.destination.id.to_string())
        .collect();
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let mut imported = Imported::default();
        for record in records {
            let d = &record.destination;
            let existing: Option<DestinationRow> = destinations::table
                .find(d.id.as_str())
                .select(DestinationRow::as_select())
                .first(conn)
                .await
                .optional()?;
            if let Some(row) = existing {
                let held = secrets::all_records(conn, &[d.id.as_str()])
                    .await?
                    .remove(d.id.as_str())
                    .unwrap_or_default();
                same_imported_or_conflict(&row.try_into()?, &held, &record)?;
                imported.already += 1;
                continue;
            }
            let s = &d.settings;
            diesel::insert_into(destinations::table)
                .values((
                    destinations::id.eq(d.id.as_str()),
                    destinations::region.eq(d.region.as_str()),
                    destinations::url.eq(d.url.as_str()),
                    destinations::enabled.eq(d.enabled),
                    destinations::paused_until.eq(d.paused_until),
                    destinations::rate_tokens.eq(record.rate_tokens),
                    destinations::rate_refilled_at.eq(record.rate_refilled_at),
                    destinations::failure_streak.eq(d.health.failure_streak as i32),
                    destinations::failure_streak_since.eq(d.health.failure_streak_since),
                    destinations::disabled_reason.eq(d.health.disabled_reason.as_deref()),
                    destinations::disabled_at.eq(d.health.disabled_at),
                    destinations::last_error.eq(d.health.last_error.as_deref()),
                    destinations::last_error_at.eq(d.health.last_error_at),
                    destinations::disable_after_seconds.eq(d.health.overrides.after_seconds),
                    destinations::disable_after_failures.eq(d
                        .health
                        .overrides
                        .failures
                        .map(|f| f as i32)),
                    settings_columns(s),
                    destinations::deleted_at.eq(record.deleted_at),
                ))
                .execute(conn)
                .await?;
            for secret in &record.secrets {
                secrets::insert_record(conn, &d.id, secret).await?;
            }
            headers::import(conn, d.id.as_str(), &record.headers).await?;
            imported.added += 1;
        }
        let entry = audit_entries::imported("destinations", &ids, imported);
        audit::record(store, conn, entry).await?;
        Ok(imported)
    })
    .await
}

pub(in crate::store) async fn import_tasks(
    store: &PgStore,
    records: Vec<TaskRecord>,
) -> Result<Imported, StoreError> {
    let ids: Vec<String> = records.iter().map(|r| r.task.id.to_string()).collect();
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        // Only a claim draws fencing tokens, and a claim writes `tasks`:
        // while this lock is held (taken first, so it waits for nothing of
        // ours) no token is drawn, and the sequence can be read and moved
        // forward below without racing one. Imports run with the runtimes
        // stopped, so nothing waits long.
        diesel::sql_query("LOCK TABLE tasks IN SHARE ROW EXCLUSIVE MODE")
            .execute(conn)
            .await?;
        let mut imported = Imported::default();
        let mut highest_token = 0;
        for record in records {
            let t = &record.task;
            if existing(conn, t).await? {
                imported.already += 1;
                continue;
            }
            insert(conn, &record).await?;
            highest_token = highest_token_of(&record, highest_token);
            imported.added += 1;
        }
        if highest_token > 0 {
            // A new lease must outrank every imported one. Only ever
            // forward: a sequence already past the imported tokens is left
            // as it is. ($1: the highest imported token, at most 2^53.)
            diesel::sql_query(
                "SELECT setval('lease_tokens', $1) FROM lease_tokens \
                 WHERE NOT is_called OR last_value < $1",
            )
            .bind::<diesel::sql_types::BigInt, _>(highest_token)
            .execute(conn)
            .await?;
        }
        audit::record(
            store,
            conn,
            audit_entries::imported("tasks", &ids, imported),
        )
        .await?;
        Ok(imported)
    })
    .await
}

/// True when the task is already here; a `Conflict` when its (tenant,
/// reminder) belongs to another task, or its id to another reminder.
async fn existing(conn: &mut AsyncPgConnection, t: &Task) -> Result<bool, StoreError> {
    let holder: Option<uuid::Uuid> = tasks::table
        .filter(tasks::tenant_id.eq(t.tenant_id.as_str()))
        .filter(tasks::reminder_id.eq(t.reminder_id.as_str()))
        .select(tasks::id)
        .first(conn)
        .await
        .optional()?;
    match holder {
        Some(id) if id == t.id.0 => Ok(true),
        Some(_) => Err(taken(t)),
        None => {
            let id_used: Option<uuid::Uuid> = tasks::table
                .find(t.id.0)
                .select(tasks::id)
                .first(conn)
                .await
                .optional()?;
            match id_used {
                Some(_) => Err(id_taken(t)),
                None => Ok(false),
            }
        }
    }
}

async fn insert(conn: &mut AsyncPgConnection, record: &TaskRecord) -> Result<(), StoreError> {
    if record.has_payload() {
        insert_payload(conn, record).await?;
    }
    insert_task(conn, record).await
}

async fn insert_payload(
    conn: &mut AsyncPgConnection,
    record: &TaskRecord,
) -> Result<(), StoreError> {
    let t = &record.task;
    diesel::insert_into(payloads::table)
        .values((
            payloads::payload_ref.eq(t.payload_ref),
            payloads::content_type.eq(&record.content_type),
            payloads::key_fingerprint.eq(&record.sealed.key_fingerprint),
            payloads::nonce.eq(&record.sealed.nonce),
            payloads::ciphertext.eq(&record.sealed.ciphertext),
            payloads::created_at.eq(t.created_at),
        ))
        .execute(conn)
        .await?;
    // The key that sealed it is now one this database's payloads are
    // sealed with (`payload_keys`).
    diesel::sql_query(
        "INSERT INTO payload_keys (fingerprint, recorded_at) VALUES ($1, now()) \
         ON CONFLICT DO NOTHING",
    )
    .bind::<diesel::sql_types::Bytea, _>(&record.sealed.key_fingerprint)
    .execute(conn)
    .await?;
    Ok(())
}

async fn insert_task(conn: &mut AsyncPgConnection, record: &TaskRecord) -> Result<(), StoreError> {
    let t = &record.task;
    diesel::insert_into(tasks::table)
        .values((
            (
                tasks::id.eq(t.id.0),
                tasks::tenant_id.eq(t.tenant_id.as_str()),
                tasks::reminder_id.eq(t.reminder_id.as_str()),
                tasks::destination_id.eq(t.destination_id.as_str()),
                tasks::region.eq(t.region.as_str()),
                tasks::state.eq(StateColumn(t.state)),
                tasks::not_before.eq(t.not_before),
                tasks::available_at.eq(t.available_at),
                tasks::retry_horizon_at.eq(t.retry_horizon_at),
                tasks::lease_token.eq(t.lease_token),
                tasks::lease_owner.eq(t.lease_owner.as_deref()),
            ),
            (
                tasks::lease_expires_at.eq(t.lease_expires_at),
                tasks::attempt_count.eq(t.attempt_count),
                tasks::attempts_before_replay.eq(t.attempts_before_replay),
                tasks::idempotency_key.eq(&t.idempotency_key),
                tasks::payload_ref.eq(t.payload_ref),
                tasks::last_status.eq(t.last_status.map(|s| i16::try_from(s).unwrap_or(i16::MAX))),
                tasks::failure_reason.eq(t.failure_reason.as_deref()),
                tasks::created_at.eq(t.created_at),
                tasks::updated_at.eq(t.updated_at),
                tasks::delivered_at.eq(t.delivered_at),
                tasks::finalized_at.eq(t.finalized_at),
                tasks::ordering_key.eq(t.ordering_key.as_ref().map(|k| k.as_str())),
                tasks::traceparent.eq(t.traceparent.as_ref().map(|p| p.as_str())),
            ),
            (
                tasks::cancelled_at.eq(t.cancelled.as_ref().map(|c| c.at)),
                tasks::cancelled_by.eq(t.cancelled.as_ref().map(|c| c.by.as_str())),
                tasks::waiting_change.eq(t.waiting_change.map(|c| c.label())),
                tasks::move_to.eq(t.waiting_change.and_then(|c| c.move_to())),
                tasks::payload_erased_at.eq(t.payload_erased_at),
            ),
        ))
        .execute(conn)
        .await?;
    for a in &record.attempts {
        let o = &a.observed;
        diesel::insert_into(attempts::table)
            .values((
                attempts::task_id.eq(a.task_id.0),
                attempts::attempt_number.eq(a.attempt_number),
                attempts::lease_token.eq(a.lease_token),
                attempts::consumer_id.eq(&a.lease_owner),
                attempts::started_at.eq(o.started_at),
                attempts::received_at.eq(o.received_at),
                attempts::http_status
                    .eq(o.http_status.map(|s| i16::try_from(s).unwrap_or(i16::MAX))),
                attempts::transport_error.eq(o.transport_error.as_deref()),
                attempts::retry_after_raw.eq(o.retry_after_raw.as_deref()),
                attempts::retry_after_deadline.eq(o.retry_after_deadline),
                attempts::outcome.eq(OutcomeColumn(a.outcome)),
                attempts::next_available_at.eq(a.next_available_at),
                attempts::recorded_at.eq(a.recorded_at),
            ))
            .execute(conn)
            .await?;
    }
    Ok(())
}

impl Transfer for PgStore {
    async fn export_destinations(&self) -> Result<Vec<DestinationRecord>, StoreError> {
        self::destinations(self).await
    }

    async fn export_tasks(
        &self,
        after: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        self::tasks(self, after, limit).await
    }

    async fn import_checked_destinations(
        &self,
        records: Vec<DestinationRecord>,
    ) -> Result<Imported, StoreError> {
        self::import_destinations(self, records).await
    }

    async fn import_checked_tasks(&self, records: Vec<TaskRecord>) -> Result<Imported, StoreError> {
        self::import_tasks(self, records).await
    }
}
