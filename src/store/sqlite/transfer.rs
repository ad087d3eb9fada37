//! Export and import on SQLite (see `transfer`).

use diesel::sql_types::{BigInt, Bool, Double, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use super::attempt_rows::{self, AttemptRow, ATTEMPT_COLUMNS};
use super::audit;
use super::destination_changes::write_settings;
use super::headers;
use super::payload_rows;
use super::rows::{
    self, any_destination_row, micros, DestinationRow, TaskRow, DESTINATION_COLUMNS, TASK_COLUMNS,
};
use super::secrets;
use super::store::SqliteStore;
use crate::domain::{Attempt, Task, TaskId, TaskState};
use crate::store::contract::{
    DestinationRecord, HeaderRecord, Imported, StoreError, TaskRecord, Transfer,
};
use crate::store::rules::audit_entries;
use crate::store::rules::import_conflicts::{
    highest_token_of, id_taken, same_imported_or_conflict, taken,
};

impl SqliteStore {
    pub(super) async fn export_destinations(&self) -> Result<Vec<DestinationRecord>, StoreError> {
        self.run(false, |conn, _| {
            let found: Vec<DestinationRow> = diesel::sql_query(format!(
                "SELECT {DESTINATION_COLUMNS} FROM destinations ORDER BY id"
            ))
            .load(conn)?;
            found
                .into_iter()
                .map(|row| {
                    let mut destination = row.destination()?;
                    let headers = headers::records(conn, &row.id)?;
                    destination.settings.headers =
                        headers.iter().map(HeaderRecord::shown).collect();
                    Ok(DestinationRecord {
                        secrets: secrets::records(conn, &destination.id)?,
                        destination,
                        rate_refilled_at: row.refilled_at()?,
                        rate_tokens: row.rate_tokens,
                        headers,
                        deleted_at: row.deleted_at()?,
                    })
                })
                .collect()
        })
        .await
    }

    pub(super) async fn export_tasks(
        &self,
        after: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        self.run(false, move |conn, _| {
            // Ids are stored as hyphenated lowercase text, which sorts as
            // the UUIDs do.
            let found: Vec<TaskRow> = diesel::sql_query(format!(
                "SELECT {TASK_COLUMNS} FROM tasks WHERE id > ? ORDER BY id LIMIT ?"
            ))
            .bind::<Text, _>(after.map_or(String::new(), |id| id.0.to_string()))
            .bind::<BigInt, _>(i64::from(limit))
            .load(conn)?;
            let mut records = Vec::with_capacity(found.len());
            for task in rows::tasks(found)? {
                let logged: Vec<AttemptRow> = diesel::sql_query(format!(
                    "SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE task_id = ? ORDER BY id"
                ))
                .bind::<Text, _>(task.id.0.to_string())
                .load(conn)?;
                let attempts = logged
                    .into_iter()
                    .map(Attempt::try_from)
                    .collect::<Result<_, _>>()?;
                if task.payload_erased_at.is_some() {
                    // Its payload's row is gone: the record says so.
                    records.push(TaskRecord::erased(task, attempts));
                    continue;
                }
                let (content_type, sealed) = payload_rows::payload_row(conn, task.payload_ref)?
                    .ok_or_else(|| StoreError::NotFound {
                        what: "payload",
                        id: task.payload_ref.to_string(),
                    })?
                    .sealed();
                records.push(TaskRecord {
                    task,
                    content_type,
                    sealed,
                    attempts,
                });
            }
            Ok(records)
        })
        .await
    }

    pub(super) async fn import_destinations(
        &self,
        records: Vec<DestinationRecord>,
    ) -> Result<Imported, StoreError> {
        let ids: Vec<String> = records
            .iter()
            .map(|r| r.destination.id.to_string())
            .collect();
        self.run(true, move |conn, ctx| {
            let mut imported = Imported::default();
            for record in records {
                let d = &record.destination;
                if let Some(row) = any_destination_row(conn, &d.id)? {
                    let held = secrets::records(conn, &d.id)?;
                    same_imported_or_conflict(&row.destination()?, &held, &record)?;
                    imported.already += 1;
                    continue;
                }
                diesel::sql_query(
                    "INSERT INTO destinations (id, region, url, enabled, \
                     paused_until, rate_tokens, rate_refilled_at, created_at, updated_at, \
                     failure_streak, failure_streak_since, disabled_reason, disabled_at, \
                     last_error, last_error_at, disable_after_seconds, \
                     disable_after_failures) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                )
                .bind::<Text, _>(d.id.as_str())
                .bind::<Text, _>(d.region.as_str())
                .bind::<Text, _>(d.url.as_str())
                .bind::<Bool, _>(d.enabled)
                .bind::<Nullable<BigInt>, _>(d.paused_until.map(micros))
                .bind::<Nullable<Double>, _>(record.rate_tokens)
                .bind::<Nullable<BigInt>, _>(record.rate_refilled_at.map(micros))
                .bind::<BigInt, _>(micros(ctx.now))
                .bind::<BigInt, _>(micros(ctx.now))
                .bind::<BigInt, _>(i64::from(d.health.failure_streak))
                .bind::<Nullable<BigInt>, _>(d.health.failure_streak_since.map(micros))
                .bind::<Nullable<Text>, _>(&d.health.disabled_reason)
                .bind::<Nullable<BigInt>, _>(d.health.disabled_at.map(micros))
                .bind::<Nullable<Text>, _>(&d.health.last_error)
                .bind::<Nullable<BigInt>, _>(d.health.last_error_at.map(micros))
                .bind::<Nullable<BigInt>, _>(d.health.overrides.after_seconds)
                .bind::<Nullable<BigInt>, _>(d.health.overrides.failures.map(i64::from))
                .execute(conn)?;
                write_settings(conn, &d.id, &d.settings, d.health.overrides, ctx.now)?;
                if let Some(at) = record.deleted_at {
                    diesel::sql_query("UPDATE destinations SET deleted_at = ? WHERE id = ?")
                        .bind::<BigInt, _>(micros(at))
                        .bind::<Text, _>(d.id.as_str())
                        .execute(conn)?;
                }
                for secret in &record.secrets {
                    secrets::insert_record(conn, &d.id, secret)?;
                }
                headers::import(conn, d.id.as_str(), &record.headers, micros(ctx.now))?;
                imported.added += 1;
            }
            let entry = audit_entries::imported("destinations", &ids, imported);
            audit::record(conn, ctx, entry)?;
            Ok(imported)
        })
        .await
    }

    pub(super) async fn import_tasks(
        &self,
        records: Vec<TaskRecord>,
    ) -> Result<Imported, StoreError> {
        let ids: Vec<String> = records.iter().map(|r| r.task.id.to_string()).collect();
        self.run(true, move |conn, ctx| {
            let mut imported = Imported::default();
            let mut highest_token = 0;
            for record in records {
                if existing(conn, &record.task)? {
                    imported.already += 1;
                    continue;
                }
                insert(conn, &record)?;
                highest_token = highest_token_of(&record, highest_token);
                imported.added += 1;
            }
            // A new lease must outrank every imported one. Only ever
            // forward, and inside this write transaction, which no claim
            // can interleave with.
            diesel::sql_query("UPDATE lease_tokens SET last = max(last, ?) WHERE id = 1")
                .bind::<BigInt, _>(highest_token)
                .execute(conn)?;
            audit::record(conn, ctx, audit_entries::imported("tasks", &ids, imported))?;
            Ok(imported)
        })
        .await
    }
}

/// True when the task is already here; a `Conflict` when its (tenant,
/// reminder) belongs to another task, or its id to another reminder.
fn existing(conn: &mut SqliteConnection, t: &Task) -> Result<bool, StoreError> {
    let holder: Vec<TaskRow> = diesel::sql_query(format!(
        "SELECT {TASK_COLUMNS} FROM tasks \
         WHERE (tenant_id = ? AND reminder_id = ?) OR id = ?"
    ))
    .bind::<Text, _>(t.tenant_id.as_str())
    .bind::<Text, _>(t.reminder_id.as_str())
    .bind::<Text, _>(t.id.0.to_string())
    .load(conn)?;
    let found = rows::tasks(holder)?;
    if found
        .iter()
        .any(|f| f.id == t.id && f.tenant_id == t.tenant_id && f.reminder_id == t.reminder_id)
    {
        return Ok(true);
    }
    // When the id is one task's and the (tenant, reminder) another's, the
    // reminder is named, as PostgreSQL names it, whichever row comes first.
    if found
        .iter()
        .any(|f| f.tenant_id == t.tenant_id && f.reminder_id == t.reminder_id)
    {
        return Err(taken(t));
    }
    match found.first() {
        None => Ok(false),
        Some(_) => Err(id_taken(t)),
    }
}

fn insert(conn: &mut SqliteConnection, record: &TaskRecord) -> Result<(), StoreError> {
    let t = &record.task;
    // An erased payload has no row to write.
    if record.has_payload() {
        payload_rows::insert_payload(
            conn,
            t.payload_ref,
            &record.content_type,
            &record.sealed,
            t.created_at,
        )?;
        // The key that sealed it is now one this file's payloads are sealed
        // with (`payload_keys`).
        diesel::sql_query(
            "INSERT OR IGNORE INTO payload_keys (fingerprint, recorded_at) VALUES (?, ?)",
        )
        .bind::<diesel::sql_types::Binary, _>(&record.sealed.key_fingerprint)
        .bind::<BigInt, _>(rows::micros(t.created_at))
        .execute(conn)?;
    }
    // Inserted as a bare pending row, then written whole: the row meets
    // every CHECK at the end of each statement.
    let bare = Task {
        state: TaskState::Pending,
        lease_token: None,
        lease_owner: None,
        lease_expires_at: None,
        ..t.clone()
    };
    rows::insert_task(conn, &bare)?;
    rows::write_task(conn, t)?;
    for attempt in &record.attempts {
        attempt_rows::insert_attempt(conn, attempt)?;
    }
    Ok(())
}

impl Transfer for SqliteStore {
    async fn export_destinations(&self) -> Result<Vec<DestinationRecord>, StoreError> {
        SqliteStore::export_destinations(self).await
    }

    async fn export_tasks(
        &self,
        after: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        SqliteStore::export_tasks(self, after, limit).await
    }

    async fn import_checked_destinations(
        &self,
        records: Vec<DestinationRecord>,
    ) -> Result<Imported, StoreError> {
        SqliteStore::import_destinations(self, records).await
    }

    async fn import_checked_tasks(&self, records: Vec<TaskRecord>) -> Result<Imported, StoreError> {
        SqliteStore::import_tasks(self, records).await
    }
}
