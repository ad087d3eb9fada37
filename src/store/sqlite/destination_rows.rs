//! A destination's own rows on SQLite: registration, the pause and the
//! health, by the rules the other stores apply (the token bucket is
//! `rate.rs`), and the outbox of operational events they write.

use std::sync::LazyLock;

use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{BigInt, Bool, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use super::audit;
use super::headers;
use super::rows::{any_destination_row, destination_row, micros};
use super::secrets;
use super::store::Ctx;
use crate::domain::{
    settings_reset_sql, AuditAction, Destination, DestinationEvent, DestinationHealth,
    DestinationId, EventKind, NewDestination, SendTarget,
};
use crate::payload_crypto::PayloadKey;
use crate::store::contract::StoreError;
use crate::store::rules::audit_entries::destination_changed;
use crate::store::rules::destination_change::{revived_elsewhere, revived_while_cancelling};
use crate::store::rules::{lifecycle, requests};

/// Registers the destination (a repeat changes nothing, other settings
/// are a conflict) and writes the audit entry.
pub(super) fn add(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    new: NewDestination,
) -> Result<Destination, StoreError> {
    let (key, now) = (&ctx.key, ctx.now);
    let id = new.id.clone();
    if let Some(existing) = any_destination_row(conn, &new.id)? {
        if existing.deleted_at()?.is_none() {
            let valid = secrets::valid_values(conn, key, &new.id, now)?;
            let same =
                requests::same_destination_or_conflict(existing.destination()?, &valid, &new)?;
            // A repeat is recorded too: someone asked, and nothing changed.
            let entry = destination_changed(AuditAction::DestinationCreate, Some(&same), &same);
            audit::record(conn, ctx, entry)?;
            return Ok(same);
        }
        // Deleted: registered again, as new.
        let was = existing.destination()?;
        if was.region != new.region {
            return Err(revived_elsewhere(&new, was.region.as_str()));
        }
        let live = live_tasks(conn, &new.id, new.region)?;
        if live > 0 {
            return Err(revived_while_cancelling(&new, live));
        }
        revive(conn, key, new, now)?;
        let added = shown(conn, &id)?.ok_or_else(|| StoreError::no_destination(&id))?;
        let entry = destination_changed(AuditAction::DestinationCreate, None, &added);
        audit::record(conn, ctx, entry)?;
        return Ok(added);
    }
    diesel::sql_query(
        "INSERT INTO destinations (id, region, url, disable_after_seconds, \
         disable_after_failures, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind::<Text, _>(new.id.as_str())
    .bind::<Text, _>(new.region.as_str())
    .bind::<Text, _>(new.url.as_str())
    .bind::<Nullable<BigInt>, _>(new.overrides.after_seconds)
    .bind::<Nullable<BigInt>, _>(new.overrides.failures.map(i64::from))
    .bind::<BigInt, _>(micros(now))
    .bind::<BigInt, _>(micros(now))
    .execute(conn)?;
    if let Some(secret) = &new.signing_secret {
        secrets::insert(conn, key, &new.id, secret, now)?;
    }
    let added = Destination {
        id: new.id,
        region: new.region,
        url: new.url,
        has_signing_secret: new.signing_secret.is_some(),
        enabled: true,
        paused_until: None,
        health: Box::new(DestinationHealth {
            overrides: new.overrides,
            ..DestinationHealth::default()
        }),
        settings: Box::default(),
    };
    let entry = destination_changed(AuditAction::DestinationCreate, None, &added);
    audit::record(conn, ctx, entry)?;
    Ok(added)
}

/// As PostgreSQL's: a deleted destination of the same region comes back
/// as if new, its bucket, quota, history of health and own settings
/// forgotten (the tombstone's row stays, for the tasks that ended under
/// it).
static REVIVE_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE destinations \
         SET url = ?, disable_after_seconds = ?, disable_after_failures = ?, deleted_at = NULL, \
         enabled = 1, paused_until = NULL, failure_streak = 0, failure_streak_since = NULL, \
         disabled_reason = NULL, disabled_at = NULL, last_error = NULL, last_error_at = NULL, \
         refused = NULL, refused_at = NULL, rate_tokens = NULL, rate_refilled_at = NULL, \
         quota_remaining = NULL, quota_resets_at = NULL, quota_limit = NULL, \
         quota_learned_at = NULL, quota_token = NULL, quota_window_ms = NULL, {}, \
         updated_at = ? \
         WHERE id = ? AND deleted_at IS NOT NULL",
        settings_reset_sql()
    )
});

fn revive(
    conn: &mut SqliteConnection,
    key: &PayloadKey,
    new: NewDestination,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    diesel::sql_query(REVIVE_SQL.as_str())
        .bind::<Text, _>(new.url.as_str())
        .bind::<Nullable<BigInt>, _>(new.overrides.after_seconds)
        .bind::<Nullable<BigInt>, _>(new.overrides.failures.map(i64::from))
        .bind::<BigInt, _>(micros(now))
        .bind::<Text, _>(new.id.as_str())
        .execute(conn)?;
    // The deletion dropped its secrets and headers; a new secret is its only one.
    if let Some(secret) = &new.signing_secret {
        secrets::insert(conn, key, &new.id, secret, now)?;
    }
    Ok(())
}

pub(super) fn send_target(
    conn: &mut SqliteConnection,
    key: &PayloadKey,
    id: &DestinationId,
    now: DateTime<Utc>,
) -> Result<Option<SendTarget>, StoreError> {
    let Some(row) = destination_row(conn, id)? else {
        return Ok(None);
    };
    let destination = row.destination()?;
    let pause_left = destination
        .paused_until
        .map(|until| until - now)
        .filter(|left| *left > Duration::zero());
    let mut destination = destination;
    destination.settings.headers = headers::opened(conn, key, id.as_str())?;
    Ok(Some(SendTarget {
        destination,
        signing_secrets: secrets::valid(conn, key, id, now)?,
        pause_left,
    }))
}

pub(super) fn pause(
    conn: &mut SqliteConnection,
    id: &DestinationId,
    pause: Duration,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, StoreError> {
    let row = destination_row(conn, id)?.ok_or_else(|| StoreError::NotFound {
        what: "destination",
        id: id.to_string(),
    })?;
    let until = lifecycle::pause(row.destination()?.paused_until, pause, now);
    diesel::sql_query("UPDATE destinations SET paused_until = ?, updated_at = ? WHERE id = ?")
        .bind::<BigInt, _>(micros(until))
        .bind::<BigInt, _>(micros(now))
        .bind::<Text, _>(id.as_str())
        .execute(conn)?;
    Ok(until)
}

/// Applies `change` to the destination's row and writes its health back.
pub(super) fn set_health(
    conn: &mut SqliteConnection,
    id: &DestinationId,
    now: DateTime<Utc>,
    change: impl FnOnce(&mut Destination, DateTime<Utc>) -> Option<DestinationEvent>,
) -> Result<Destination, StoreError> {
    let row = destination_row(conn, id)?.ok_or_else(|| StoreError::NotFound {
        what: "destination",
        id: id.to_string(),
    })?;
    let mut d = row.destination()?;
    let event = change(&mut d, now);
    write_health(conn, &d, now)?;
    if let Some(event) = event {
        insert_event(conn, &event)?;
    }
    d.settings.headers = headers::shown(conn, id.as_str())?;
    Ok(d)
}

/// The destination as every read shows it (its headers with a secret's
/// hint only), unless it is missing or deleted.
pub(super) fn shown(
    conn: &mut SqliteConnection,
    id: &DestinationId,
) -> Result<Option<Destination>, StoreError> {
    let Some(row) = destination_row(conn, id)? else {
        return Ok(None);
    };
    let mut destination = row.destination()?;
    destination.settings.headers = headers::shown(conn, id.as_str())?;
    Ok(Some(destination))
}

/// Writes a destination's `enabled` and health columns as `d` has them.
pub(super) fn write_health(
    conn: &mut SqliteConnection,
    d: &Destination,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let h = &d.health;
    diesel::sql_query(
        "UPDATE destinations SET enabled = ?, failure_streak = ?, failure_streak_since = ?, \
         disabled_reason = ?, disabled_at = ?, last_error = ?, last_error_at = ?, updated_at = ? \
         WHERE id = ?",
    )
    .bind::<Bool, _>(d.enabled)
    .bind::<BigInt, _>(i64::from(h.failure_streak))
    .bind::<Nullable<BigInt>, _>(h.failure_streak_since.map(micros))
    .bind::<Nullable<Text>, _>(&h.disabled_reason)
    .bind::<Nullable<BigInt>, _>(h.disabled_at.map(micros))
    .bind::<Nullable<Text>, _>(&h.last_error)
    .bind::<Nullable<BigInt>, _>(h.last_error_at.map(micros))
    .bind::<BigInt, _>(micros(now))
    .bind::<Text, _>(d.id.as_str())
    .execute(conn)?;
    Ok(())
}

/// Records an operational event in the outbox, in the caller's
/// transaction.
pub(super) fn insert_event(
    conn: &mut SqliteConnection,
    event: &DestinationEvent,
) -> Result<(), StoreError> {
    diesel::sql_query(
        "INSERT INTO destination_events (id, kind, destination_id, region, reason, at, \
         last_error, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind::<Text, _>(event.id.to_string())
    .bind::<Text, _>(event.kind.as_str())
    .bind::<Text, _>(event.destination.as_str())
    .bind::<Text, _>(event.region.as_str())
    .bind::<Nullable<Text>, _>(&event.reason)
    .bind::<BigInt, _>(micros(event.at))
    .bind::<Nullable<Text>, _>(&event.last_error)
    .bind::<Nullable<Text>, _>(&event.data)
    .execute(conn)?;
    Ok(())
}

#[derive(diesel::QueryableByName)]
struct EventRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Text)]
    destination_id: String,
    #[diesel(sql_type = Text)]
    region: String,
    #[diesel(sql_type = Nullable<Text>)]
    reason: Option<String>,
    #[diesel(sql_type = BigInt)]
    at: i64,
    #[diesel(sql_type = Nullable<Text>)]
    last_error: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    data: Option<String>,
}

pub(super) fn events(
    conn: &mut SqliteConnection,
    region: crate::domain::Region,
    limit: u32,
) -> Result<Vec<DestinationEvent>, StoreError> {
    use crate::store::rules::columns::{corrupt, region as region_of};
    let rows: Vec<EventRow> = diesel::sql_query(
        "SELECT id, kind, destination_id, region, reason, at, last_error, data \
         FROM destination_events WHERE region = ? ORDER BY rowid LIMIT ?",
    )
    .bind::<Text, _>(region.as_str())
    .bind::<BigInt, _>(i64::from(limit))
    .load(conn)?;
    rows.into_iter()
        .map(|r| {
            Ok(DestinationEvent {
                id: r
                    .id
                    .parse()
                    .map_err(|e| corrupt("destination_events.id", e))?,
                kind: EventKind::parse(&r.kind)
                    .ok_or_else(|| corrupt("destination_events.kind", &r.kind))?,
                destination: DestinationId::new(&r.destination_id)
                    .map_err(|e| corrupt("destination_events.destination_id", e))?,
                region: region_of("destination_events.region", &r.region)?,
                reason: r.reason,
                at: super::rows::instant("destination_events.at", r.at)?,
                last_error: r.last_error,
                data: r.data,
            })
        })
        .collect()
}

pub(super) fn forget_events(
    conn: &mut SqliteConnection,
    ids: &[uuid::Uuid],
) -> Result<u64, StoreError> {
    let mut gone = 0;
    for id in ids {
        gone += diesel::sql_query("DELETE FROM destination_events WHERE id = ?")
            .bind::<Text, _>(id.to_string())
            .execute(conn)? as u64;
    }
    Ok(gone)
}

#[derive(QueryableByName)]
struct Live {
    #[diesel(sql_type = BigInt)]
    live: i64,
}

/// The destination's tasks that have not ended.
pub(super) fn live_tasks(
    conn: &mut SqliteConnection,
    id: &DestinationId,
    region: crate::domain::Region,
) -> Result<u64, StoreError> {
    let live: Live = diesel::sql_query(
        "SELECT count(*) AS live FROM tasks WHERE destination_id = ? AND region = ? \
         AND state IN ('pending', 'leased', 'retry_wait')",
    )
    .bind::<Text, _>(id.as_str())
    .bind::<Text, _>(region.as_str())
    .get_result(conn)?;
    Ok(u64::try_from(live.live).unwrap_or(0))
}
