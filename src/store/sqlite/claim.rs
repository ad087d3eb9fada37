//! The claim on SQLite: inside the write lock, the turns and the choice of
//! `claim_turn`, each lookup one probe of an index (whether a destination
//! has work through `tasks_due` and `tasks_expired_leases`; its tenants and
//! their rows through `tasks_tenant_turns`; a keyed row that waits behind
//! an earlier one of its line is left out, `ordering`), and each chosen row
//! leased by `lifecycle::lease` with a fresh fencing token.

use std::collections::HashMap;

use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use super::attempt_rows;
use super::payload_rows;
use super::rows::{self, micros, TaskRow, TASK_COLUMNS};
use super::store::next_token;
use super::store::Ctx;
use crate::domain::{ClaimedTask, DestinationId, Payload, Task, TenantId};
use crate::payload_crypto::PayloadKey;
use crate::store::contract::{ClaimRequest, StoreError};
use crate::store::rules::claim_turn::{self, Lookups, Row};
use crate::store::rules::lifecycle;
use crate::store::rules::ordering::SQL_MAY_GO as MAY_GO;

pub(super) fn claim_due(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    request: &ClaimRequest,
) -> Result<Vec<ClaimedTask>, StoreError> {
    if request.limit == 0 || request.per_destination_cap == 0 {
        return Ok(Vec::new());
    }
    #[derive(diesel::QueryableByName)]
    struct Open {
        #[diesel(sql_type = Text)]
        id: String,
    }
    let open: Vec<Open> = diesel::sql_query(
        "SELECT id FROM destinations WHERE region = ? AND enabled = 1 \
         AND (paused_until IS NULL OR paused_until <= ?) ORDER BY id",
    )
    .bind::<Text, _>(request.region.as_str())
    .bind::<BigInt, _>(micros(ctx.now))
    .load(conn)?;
    let open: Vec<DestinationId> = open
        .into_iter()
        .filter_map(|d| DestinationId::new(&d.id).ok())
        .collect();
    let mut lookups = Sqlite {
        conn,
        ctx,
        request,
        read: HashMap::new(),
    };
    let chosen = claim_turn::choose(request, &open, &mut lookups)?;
    let Sqlite { conn, mut read, .. } = lookups;
    let mut claimed = Vec::with_capacity(chosen.len());
    for seq in chosen {
        let Some(task) = read.get_mut(&seq) else {
            continue;
        };
        let token = next_token(conn)?;
        let (mut one, lost) =
            lifecycle::lease(task, token, &request.lease_owner, request.lease, ctx.now);
        rows::write_task(conn, &one.task)?;
        if let Some(lost) = lost {
            attempt_rows::insert_attempt(conn, &lost)?;
        }
        one.payload = open_payload(conn, &ctx.key, one.task.payload_ref).ok();
        claimed.push(one);
    }
    Ok(claimed)
}

/// The claim's lookups inside the write lock; a row's key is its `seq`,
/// the order rows were inserted. Rows read are kept for the lease.
struct Sqlite<'a> {
    conn: &'a mut SqliteConnection,
    ctx: &'a Ctx,
    request: &'a ClaimRequest,
    read: HashMap<i64, Task>,
}

impl Lookups<i64> for Sqlite<'_> {
    type Error = StoreError;

    fn has_work(&mut self, destination: &DestinationId) -> Result<bool, StoreError> {
        #[derive(diesel::QueryableByName)]
        struct Found {
            #[diesel(sql_type = BigInt)]
            found: i64,
        }
        let now = micros(self.ctx.now);
        // Each side of the OR probes an index of its own.
        let found: Found = diesel::sql_query(format!(
            "SELECT EXISTS (SELECT 1 FROM tasks t \
                 WHERE destination_id = ? AND region = ? AND state IN ('pending', 'retry_wait') \
                   AND available_at <= ? AND not_before <= ? AND waiting_change IS NULL \
                   AND {MAY_GO}) \
                 OR EXISTS (SELECT 1 FROM tasks t \
                 WHERE destination_id = ? AND region = ? AND state = 'leased' \
                   AND lease_expires_at <= ? AND not_before <= ? AND waiting_change IS NULL \
                   AND {MAY_GO}) AS found",
        ))
        .bind::<Text, _>(destination.as_str())
        .bind::<Text, _>(self.request.region.as_str())
        .bind::<BigInt, _>(now)
        .bind::<BigInt, _>(now)
        .bind::<Text, _>(destination.as_str())
        .bind::<Text, _>(self.request.region.as_str())
        .bind::<BigInt, _>(now)
        .bind::<BigInt, _>(now)
        .get_result(self.conn)?;
        Ok(found.found != 0)
    }

    fn next_tenant(
        &mut self,
        destination: &DestinationId,
        after: &str,
    ) -> Result<Option<TenantId>, StoreError> {
        #[derive(diesel::QueryableByName)]
        struct Next {
            #[diesel(sql_type = Nullable<Text>)]
            tenant: Option<String>,
        }
        let next: Next = diesel::sql_query(
            "SELECT min(tenant_id) AS tenant FROM tasks \
             WHERE region = ? AND destination_id = ? AND finalized_at IS NULL AND tenant_id > ?",
        )
        .bind::<Text, _>(self.request.region.as_str())
        .bind::<Text, _>(destination.as_str())
        .bind::<Text, _>(after)
        .get_result(self.conn)?;
        next.tenant
            .map(|t| {
                TenantId::new(&t).map_err(|e| StoreError::Corrupt {
                    column: "tasks.tenant_id",
                    reason: e.to_string(),
                })
            })
            .transpose()
    }

    fn rows(
        &mut self,
        destination: &DestinationId,
        tenant: &TenantId,
        limit: usize,
    ) -> Result<Vec<Row<i64>>, StoreError> {
        let now = micros(self.ctx.now);
        let found: Vec<TaskRow> = diesel::sql_query(format!(
            "SELECT {TASK_COLUMNS} FROM tasks t \
             WHERE region = ? AND destination_id = ? AND tenant_id = ? AND finalized_at IS NULL \
               AND available_at <= ? AND not_before <= ? AND waiting_change IS NULL \
               AND (state IN ('pending', 'retry_wait') \
                    OR (state = 'leased' AND lease_expires_at <= ?)) \
               AND {MAY_GO} \
             ORDER BY available_at, seq LIMIT ?"
        ))
        .bind::<Text, _>(self.request.region.as_str())
        .bind::<Text, _>(destination.as_str())
        .bind::<Text, _>(tenant.as_str())
        .bind::<BigInt, _>(now)
        .bind::<BigInt, _>(now)
        .bind::<BigInt, _>(now)
        .bind::<BigInt, _>(i64::try_from(limit).unwrap_or(i64::MAX))
        .load(self.conn)?;
        let mut rows = Vec::with_capacity(found.len());
        for row in found {
            let seq = row.seq;
            let task = Task::try_from(row)?;
            if let Some(due_at) = lifecycle::claimable_since(&task, self.ctx.now) {
                rows.push(Row {
                    available_at: task.available_at,
                    due_at,
                    key: seq,
                });
                self.read.insert(seq, task);
            }
        }
        Ok(rows)
    }
}

/// Reads and opens a task's payload; one an operator erased is answered
/// as such (`StoreError::payload_erased`), whether `task` says so or the
/// row, read now, does.
pub(super) fn task_payload(
    conn: &mut SqliteConnection,
    key: &PayloadKey,
    task: &Task,
) -> Result<Payload, StoreError> {
    if let Some(at) = task.payload_erased_at {
        return Err(StoreError::payload_erased(task.payload_ref, at));
    }
    match open_payload(conn, key, task.payload_ref) {
        Err(StoreError::NotFound { .. }) => {
            match rows::task(conn, task.id)?.and_then(|t| t.payload_erased_at) {
                Some(at) => Err(StoreError::payload_erased(task.payload_ref, at)),
                None => Err(not_found(task.payload_ref)),
            }
        }
        Err(StoreError::Payload(
            e @ crate::payload_crypto::PayloadCryptoError::WrongKey { .. },
        )) => {
            let recorded = super::payload_keys::recorded(conn)?;
            Err(StoreError::Payload(key.knowing_recorded(e, &recorded)))
        }
        read => read,
    }
}

fn not_found(payload_ref: uuid::Uuid) -> StoreError {
    StoreError::NotFound {
        what: "payload",
        id: payload_ref.to_string(),
    }
}

/// Reads and opens a payload.
pub(super) fn open_payload(
    conn: &mut SqliteConnection,
    key: &PayloadKey,
    payload_ref: uuid::Uuid,
) -> Result<Payload, StoreError> {
    let (content_type, sealed) = payload_rows::payload_row(conn, payload_ref)?
        .ok_or_else(|| not_found(payload_ref))?
        .sealed();
    let body = key.open(payload_ref, &content_type, &sealed)?;
    Ok(Payload { content_type, body })
}
