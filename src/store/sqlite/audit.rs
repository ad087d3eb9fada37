//! The audit log in the embedded file: [`record`], which every admin call
//! runs inside its `BEGIN IMMEDIATE` transaction (and which other store
//! code may call inside its own), a page of entries by filter, and
//! retention's delete.

use chrono::Duration;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use super::rows::{self, instant, micros};
use super::store::Ctx;
use super::store::SqliteStore;
use crate::domain::{
    AuditAction, AuditFilter, AuditPage, Destination, DestinationId, NewAuditEntry,
};
use crate::store::contract::{AuditScope, StoreError};
use crate::store::rules::audit_entries::{self, destination_changed};
use crate::store::rules::audit_rows::{json_text, AuditColumns};

/// Writes `entry` as the operation's actor, at its now, on `conn`: call it
/// inside the transaction of the action it records, so the two commit or
/// roll back together.
pub(in crate::store) fn record(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    entry: NewAuditEntry,
) -> Result<(), StoreError> {
    let actor = &ctx.actor;
    diesel::sql_query(
        "INSERT INTO audit_log (at, actor_kind, actor_id, actor_name, action, target_kind, \
             target_id, region, before, after) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind::<BigInt, _>(micros(ctx.now))
    .bind::<Text, _>(actor.kind())
    .bind::<Nullable<Text>, _>(actor.id())
    .bind::<Nullable<Text>, _>(actor.name())
    .bind::<Text, _>(entry.action.as_str())
    .bind::<Text, _>(entry.target.kind.as_str())
    .bind::<Text, _>(&entry.target.id)
    .bind::<Nullable<Text>, _>(entry.region.as_ref().map(|r| r.as_str()))
    .bind::<Nullable<Text>, _>(json_text(&entry.before))
    .bind::<Nullable<Text>, _>(json_text(&entry.after))
    .execute(conn)?;
    Ok(())
}

/// Runs `change` on the destination `id` and writes its audit entry, with
/// the destination as it was before and as `change` left it.
pub(super) fn destination_change(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    id: &DestinationId,
    action: AuditAction,
    change: impl FnOnce(&mut SqliteConnection) -> Result<Destination, StoreError>,
) -> Result<Destination, StoreError> {
    let before = rows::destination_row(conn, id)?
        .ok_or_else(|| StoreError::no_destination(id))?
        .destination()?;
    let after = change(conn)?;
    record(
        conn,
        ctx,
        destination_changed(action, Some(&before), &after),
    )?;
    Ok(after)
}

#[derive(QueryableByName)]
struct EntryRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    at: i64,
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

/// As PostgreSQL's: a NULL filter admits every row, newest first by id.
const ENTRIES_SQL: &str = "SELECT id, at, actor_kind, actor_id, actor_name, action, \
        target_kind, target_id, region, before, after \
    FROM audit_log \
    WHERE (?1 IS NULL OR id < ?1) \
      AND (?2 IS NULL OR action = ?2) \
      AND (?3 IS NULL OR target_kind = ?3) \
      AND (?4 IS NULL OR target_id = ?4) \
      AND (?5 IS NULL OR actor_id = ?5 OR actor_kind = ?5) \
      AND (?6 IS NULL OR at >= ?6) \
      AND (?7 IS NULL OR at < ?7) \
    ORDER BY id DESC LIMIT ?8";

impl SqliteStore {
    pub(in crate::store) async fn read_audit_page(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> Result<AuditPage, StoreError> {
        let filter = filter.clone();
        self.run(false, move |conn, _| {
            let rows: Vec<EntryRow> = diesel::sql_query(ENTRIES_SQL)
                .bind::<Nullable<BigInt>, _>(before)
                .bind::<Nullable<Text>, _>(filter.action.map(|a| a.as_str()))
                .bind::<Nullable<Text>, _>(filter.target_kind.map(|k| k.as_str()))
                .bind::<Nullable<Text>, _>(filter.target_id.as_deref())
                .bind::<Nullable<Text>, _>(filter.actor.as_deref())
                .bind::<Nullable<BigInt>, _>(filter.since.map(micros))
                .bind::<Nullable<BigInt>, _>(filter.until.map(micros))
                .bind::<BigInt, _>(i64::from(limit) + 1)
                .load(conn)?;
            let entries = rows
                .into_iter()
                .map(|r| {
                    AuditColumns {
                        id: r.id,
                        at: instant("audit_log.at", r.at)?,
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
        })
        .await
    }

    pub(in crate::store) async fn prune_audit_log(
        &self,
        scope: AuditScope,
        older_than: Duration,
        batch_size: u32,
    ) -> Result<u64, StoreError> {
        let batch = batch_size.max(1);
        let (kind, region) = match scope {
            AuditScope::Region(r) => ("region", Some(r.as_str().to_owned())),
            AuditScope::Shared => ("shared", None),
            AuditScope::All => ("all", None),
        };
        let mut deleted = 0;
        let mut cutoff = None;
        loop {
            let region = region.clone();
            let (n, at) = self
                .run(true, move |conn, ctx| {
                    let cutoff = ctx.now - older_than;
                    let n = diesel::sql_query(
                        "DELETE FROM audit_log WHERE id IN \
                         (SELECT id FROM audit_log WHERE at < ? \
                          AND (? = 'all' OR (? = 'shared' AND region IS NULL) \
                               OR (? = 'region' AND region = ?)) \
                          ORDER BY at LIMIT ?)",
                    )
                    .bind::<BigInt, _>(micros(cutoff))
                    .bind::<Text, _>(kind)
                    .bind::<Text, _>(kind)
                    .bind::<Text, _>(kind)
                    .bind::<Nullable<Text>, _>(region)
                    .bind::<BigInt, _>(i64::from(batch))
                    .execute(conn)?;
                    Ok((n, cutoff))
                })
                .await?;
            deleted += n as u64;
            cutoff.get_or_insert(at);
            if n < batch as usize {
                break;
            }
        }
        if let (true, Some(cutoff)) = (deleted > 0, cutoff) {
            self.run(true, move |conn, ctx| {
                record(
                    conn,
                    ctx,
                    audit_entries::audit_pruned(scope, cutoff, deleted),
                )
            })
            .await?;
        }
        Ok(deleted)
    }
}
