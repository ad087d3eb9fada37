//! The claim on SQLite: inside the write lock, the turn over the region's
//! open destinations (`claim_turn`), each destination's oldest due rows
//! and expired leases read through its index (leaving a keyed row that
//! waits behind an earlier one of its line, `ordering`), and each chosen
//! row leased by `lifecycle::lease` with a fresh fencing token.

use diesel::sql_types::{BigInt, Text};
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use super::rows::{self, micros, TaskRow, TASK_COLUMNS};
use super::{next_token, Ctx};
use crate::domain::{ClaimedTask, DestinationId, Payload, Task};
use crate::payload_crypto::PayloadKey;
use crate::store::claim_turn::{self, Work};
use crate::store::ordering::SQL_MAY_GO as MAY_GO;
use crate::store::{lifecycle, ClaimRequest, StoreError};

pub(super) fn claim_due(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    request: &ClaimRequest,
) -> Result<Vec<ClaimedTask>, StoreError> {
    if request.limit == 0 || request.per_destination_cap == 0 {
        return Ok(Vec::new());
    }
    let now = micros(ctx.now);
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
    .bind::<BigInt, _>(now)
    .load(conn)?;
    let open: Vec<DestinationId> = open
        .into_iter()
        .filter_map(|d| DestinationId::new(&d.id).ok())
        .collect();
    let cap = i64::from(request.per_destination_cap);
    let mut rows_by_seq: Vec<(i64, Task)> = Vec::new();
    let mut work: Vec<Work<i64>> = Vec::new();
    for destination in claim_turn::turn(request, &open) {
        if work.len() == request.limit as usize {
            break;
        }
        let mut found = Work::default();
        let due: Vec<TaskRow> = diesel::sql_query(format!(
            "SELECT {TASK_COLUMNS} FROM tasks t \
             WHERE destination_id = ? AND region = ? AND state IN ('pending', 'retry_wait') \
               AND available_at <= ? AND not_before <= ? AND {MAY_GO} \
             ORDER BY available_at, seq LIMIT ?"
        ))
        .bind::<Text, _>(destination.as_str())
        .bind::<Text, _>(request.region.as_str())
        .bind::<BigInt, _>(now)
        .bind::<BigInt, _>(now)
        .bind::<BigInt, _>(cap)
        .load(conn)?;
        let expired: Vec<TaskRow> = diesel::sql_query(format!(
            "SELECT {TASK_COLUMNS} FROM tasks t \
             WHERE destination_id = ? AND region = ? AND state = 'leased' \
               AND lease_expires_at <= ? AND not_before <= ? AND {MAY_GO} \
             ORDER BY lease_expires_at, seq LIMIT ?"
        ))
        .bind::<Text, _>(destination.as_str())
        .bind::<Text, _>(request.region.as_str())
        .bind::<BigInt, _>(now)
        .bind::<BigInt, _>(now)
        .bind::<BigInt, _>(cap)
        .load(conn)?;
        for (row, is_expired) in due
            .into_iter()
            .map(|r| (r, false))
            .chain(expired.into_iter().map(|r| (r, true)))
        {
            let seq = row.seq;
            let task = Task::try_from(row)?;
            if let Some(at) = lifecycle::claimable_since(&task, ctx.now) {
                if is_expired {
                    found.expired.push((at, seq));
                } else {
                    found.due.push((at, seq));
                }
                rows_by_seq.push((seq, task));
            }
        }
        if !found.is_empty() {
            work.push(found);
        }
    }
    let chosen = claim_turn::choose(request, work);
    let mut claimed = Vec::with_capacity(chosen.len());
    for seq in chosen {
        let Some((_, task)) = rows_by_seq.iter_mut().find(|(s, _)| *s == seq) else {
            continue;
        };
        let token = next_token(conn)?;
        let (mut one, lost) =
            lifecycle::lease(task, token, &request.lease_owner, request.lease, ctx.now);
        rows::write_task(conn, &one.task)?;
        if let Some(lost) = lost {
            rows::insert_attempt(conn, &lost)?;
        }
        one.payload = open_payload(conn, &ctx.key, one.task.payload_ref).ok();
        claimed.push(one);
    }
    Ok(claimed)
}

/// Reads and opens a task's payload.
pub(super) fn open_payload(
    conn: &mut SqliteConnection,
    key: &PayloadKey,
    payload_ref: uuid::Uuid,
) -> Result<Payload, StoreError> {
    let (content_type, sealed) = rows::payload_row(conn, payload_ref)?
        .ok_or_else(|| StoreError::NotFound {
            what: "payload",
            id: payload_ref.to_string(),
        })?
        .sealed();
    let body = key.open(payload_ref, &content_type, &sealed)?;
    Ok(Payload { content_type, body })
}
