//! The audit log on PostgreSQL: [`record`], which every admin call runs
//! inside its own transaction (and which other store code may call inside
//! its own), a page of entries by filter, and retention's delete.

use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::{AuditFilter, AuditPage, NewAuditEntry};
use crate::store::contract::{AuditScope, StoreError};
use crate::store::postgres::store::PgStore;
use crate::store::rules::audit_entries;
use crate::store::rules::audit_rows::{json_text, AuditColumns};

/// $1 the store's now (NULL: the transaction's), $2 actor kind, $3 actor
/// id, $4 actor name, $5 action, $6 target kind, $7 target id, $8 region,
/// $9 before, $10 after (JSON text).
const RECORD_SQL: &str = "INSERT INTO audit_log \
    (at, actor_kind, actor_id, actor_name, action, target_kind, target_id, region, before, after) \
    VALUES (coalesce($1, now()), $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb)";

/// Writes `entry` as the store's actor, at the store's now, on `conn`: call
/// it inside the transaction of the action it records, so the two commit
/// or roll back together.
pub(in crate::store) async fn record(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    entry: NewAuditEntry,
) -> Result<(), StoreError> {
    let actor = &store.actor;
    diesel::sql_query(RECORD_SQL)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Text, _>(actor.kind())
        .bind::<Nullable<Text>, _>(actor.id())
        .bind::<Nullable<Text>, _>(actor.name())
        .bind::<Text, _>(entry.action.as_str())
        .bind::<Text, _>(entry.target.kind.as_str())
        .bind::<Text, _>(&entry.target.id)
        .bind::<Nullable<Text>, _>(entry.region.as_ref().map(|r| r.as_str()))
        .bind::<Nullable<Text>, _>(json_text(&entry.before))
        .bind::<Nullable<Text>, _>(json_text(&entry.after))
        .execute(conn)
        .await?;
    Ok(())
}

#[derive(QueryableByName)]
struct EntryRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Timestamptz)]
    at: DateTime<Utc>,
    #[diesel(sql_type = Text)]
    actor_kind: String,
    #[diesel(sql_type = Nullable<Text>)]
    actor_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    actor_name: Option<String>,
    #[diesel(sql_type = Text)]
    action: String,
    #[diesel(sql_type = Text)]
    target_kind: String,
    #[diesel(sql_type = Text)]
    target_id: String,
    #[diesel(sql_type = Nullable<Text>)]
    region: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    before: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    after: Option<String>,
}

/// $1 before (id), $2 action, $3 target kind, $4 target id, $5 actor (its
/// id or its kind), $6 since, $7 until, $8 the most rows. A NULL filter
/// admits every row; the id orders the page, newest first.
const ENTRIES_SQL: &str = "SELECT id, at, actor_kind, actor_id, actor_name, action, \
        target_kind, target_id, region, before::text AS before, after::text AS after \
    FROM audit_log \
    WHERE ($1::bigint IS NULL OR id < $1) \
      AND ($2::text IS NULL OR action = $2) \
      AND ($3::text IS NULL OR target_kind = $3) \
      AND ($4::text IS NULL OR target_id = $4) \
      AND ($5::text IS NULL OR actor_id = $5 OR actor_kind = $5) \
      AND ($6::timestamptz IS NULL OR at >= $6) \
      AND ($7::timestamptz IS NULL OR at < $7) \
    ORDER BY id DESC LIMIT $8";

pub(super) async fn entries(
    store: &PgStore,
    filter: &AuditFilter,
    before: Option<i64>,
    limit: u32,
) -> Result<AuditPage, StoreError> {
    let mut conn = store.conn().await?;
    let rows: Vec<EntryRow> = diesel::sql_query(ENTRIES_SQL)
        .bind::<Nullable<BigInt>, _>(before)
        .bind::<Nullable<Text>, _>(filter.action.map(|a| a.as_str()))
        .bind::<Nullable<Text>, _>(filter.target_kind.map(|k| k.as_str()))
        .bind::<Nullable<Text>, _>(filter.target_id.as_deref())
        .bind::<Nullable<Text>, _>(filter.actor.as_deref())
        .bind::<Nullable<Timestamptz>, _>(filter.since)
        .bind::<Nullable<Timestamptz>, _>(filter.until)
        .bind::<BigInt, _>(i64::from(limit) + 1)
        .load(&mut conn)
        .await?;
    let entries = rows
        .into_iter()
        .map(|r| {
            AuditColumns {
                id: r.id,
                at: r.at,
                actor_kind: r.actor_kind,
                actor_id: r.actor_id,
                actor_name: r.actor_name,
                action: r.action,
                target_kind: r.target_kind,
                target_id: r.target_id,
                region: r.region,
                before: r.before,
                after: r.after,
            }
            .into_entry()
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(AuditPage::of(entries, limit))
}

/// $1 the cutoff, $2 the most rows, $3 the scope (`region`, `shared` or
/// `all`), $4 the region.
const PRUNE_SQL: &str = "DELETE FROM audit_log WHERE id IN ( \
        SELECT id FROM audit_log \
        WHERE at < $1 \
          AND ($3 = 'all' OR ($3 = 'shared' AND region IS NULL) \
               OR ($3 = 'region' AND region = $4)) \
        ORDER BY at LIMIT $2)";

pub(super) async fn prune(
    store: &PgStore,
    scope: AuditScope,
    older_than: Duration,
    batch_size: u32,
) -> Result<u64, StoreError> {
    let mut conn = store.conn().await?;
    let cutoff = super::store_now::now(store, &mut conn).await? - older_than;
    let (kind, region) = match scope {
        AuditScope::Region(r) => ("region", Some(r.as_str().to_owned())),
        AuditScope::Shared => ("shared", None),
        AuditScope::All => ("all", None),
    };
    let batch = batch_size.max(1);
    let mut deleted = 0;
    loop {
        let n = diesel::sql_query(PRUNE_SQL)
            .bind::<Timestamptz, _>(cutoff)
            .bind::<BigInt, _>(i64::from(batch))
            .bind::<Text, _>(kind)
            .bind::<Nullable<Text>, _>(region.as_deref())
            .execute(&mut conn)
            .await?;
        deleted += n as u64;
        if n < batch as usize {
            break;
        }
    }
    if deleted > 0 {
        let entry = audit_entries::audit_pruned(scope, cutoff, deleted);
        record(store, &mut conn, entry).await?;
    }
    Ok(deleted)
}
