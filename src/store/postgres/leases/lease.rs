//! The transitions out of `leased` that end no attempt: handing a lease
//! back unsent and extending it. Each is guarded by the lease token like
//! the finishes; a refusal writes no attempt row.

use chrono::Duration;
use diesel::sql_types::{BigInt, Bool, Nullable, Text, Timestamptz, Uuid};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::super::connection::prepared::prepared;
use super::super::tables::rows::delay_millis;
use super::transitions::{WhyNot, WHY_NOT_SQL};
use crate::domain::Lease;
use crate::store::contract::{StoreError, StoreStats, TransitionOutcome};
use crate::store::postgres::store::PgStore;

/// Hands the lease back without counting an attempt, by the rule of
/// `lifecycle::hand_back`: due again about `$4` ms after now and never
/// before its destination's pause ends (`GREATEST` and `LEAST` ignore
/// NULLs). A task attempted since scheduling or its last replay has its
/// delay clamped to the retry horizon, and fails with `retry_horizon` when
/// nothing can happen before the horizon; a task not yet attempted never
/// fails here and its delay is not clamped. Judged on the database's clock.
pub const HAND_BACK_SQL: &str = r#"
-- Each parameter once, in order (see prepared.rs).
WITH params AS MATERIALIZED (
    SELECT $1::uuid AS id, $2::bigint AS token, coalesce($3, now()) AS now, $4::bigint AS delay_ms
),
clock AS (SELECT now FROM params),
target AS (
    SELECT t.id,
           (SELECT d.paused_until FROM destinations d WHERE d.id = t.destination_id) AS paused_until,
           t.retry_horizon_at AS horizon,
           -- The claim counted the attempt handed back.
           t.attempt_count - 1 > t.attempts_before_replay AS tried
    FROM tasks t
    WHERE t.id = (SELECT id FROM params) AND t.state = 'leased'
      AND t.lease_token = (SELECT token FROM params)
),
verdict AS (
    SELECT target.*,
           target.tried AND GREATEST(clock.now, target.paused_until) >= target.horizon AS expired,
           clock.now + (SELECT delay_ms FROM params) * interval '1 millisecond' AS again
    FROM target, clock
)
UPDATE tasks t
SET state = CASE WHEN verdict.expired THEN 'failed'
                 WHEN verdict.tried THEN 'retry_wait'
                 ELSE 'pending' END::task_state,
    attempt_count = t.attempt_count - 1,
    lease_token = NULL,
    lease_owner = NULL,
    lease_expires_at = NULL,
    available_at = GREATEST(t.available_at,
                            -- LEAST would turn a NULL delay into the horizon.
                            CASE WHEN verdict.again IS NULL THEN NULL
                                 WHEN verdict.tried THEN LEAST(verdict.again, verdict.horizon)
                                 ELSE verdict.again
                            END,
                            verdict.paused_until),
    failure_reason = CASE WHEN verdict.expired THEN 'retry_horizon' END,
    finalized_at = CASE WHEN verdict.expired THEN clock.now END,
    updated_at = clock.now
FROM clock, verdict
WHERE t.id = verdict.id AND t.state = 'leased' AND t.lease_token = (SELECT token FROM params)
RETURNING verdict.expired AS expired
"#;

#[derive(QueryableByName)]
struct Released {
    #[diesel(sql_type = Bool)]
    expired: bool,
}

pub const EXTEND_SQL: &str = r#"
WITH clock AS (SELECT coalesce($3, now()) AS now)
UPDATE tasks t
SET lease_expires_at = GREATEST(t.lease_expires_at, clock.now + $4 * interval '1 millisecond'),
    updated_at = clock.now
FROM clock
WHERE t.id = $1 AND t.state = 'leased' AND t.lease_token = $2
"#;

pub(in crate::store::postgres) async fn hand_back(
    store: &PgStore,
    lease: &Lease,
    after: Option<Duration>,
) -> Result<TransitionOutcome, StoreError> {
    let mut conn = store.conn().await?;
    let released: Vec<Released> = prepared(HAND_BACK_SQL)
        .bind::<Uuid, _>(lease.task_id.0)
        .bind::<BigInt, _>(lease.token)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Nullable<BigInt>, _>(after.map(delay_millis))
        .load(&mut conn)
        .await?;
    match released.as_slice() {
        [Released { expired: true }, ..] => Ok(TransitionOutcome::PastHorizon),
        [_, ..] => Ok(TransitionOutcome::Applied),
        [] => lease_only_outcome(store, &mut conn, lease, 0).await,
    }
}

pub(in crate::store::postgres) async fn extend_lease(
    store: &PgStore,
    lease: &Lease,
    by: Duration,
) -> Result<TransitionOutcome, StoreError> {
    let mut conn = store.conn().await?;
    let touched = diesel::sql_query(EXTEND_SQL)
        .bind::<Uuid, _>(lease.task_id.0)
        .bind::<BigInt, _>(lease.token)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<BigInt, _>(by.num_milliseconds().max(0))
        .execute(&mut conn)
        .await?;
    lease_only_outcome(store, &mut conn, lease, touched).await
}

/// Release and extend end no attempt, so a refusal writes no attempt row.
async fn lease_only_outcome(
    store: &PgStore,
    conn: &mut diesel_async::AsyncPgConnection,
    lease: &Lease,
    touched: usize,
) -> Result<TransitionOutcome, StoreError> {
    if touched == 1 {
        return Ok(TransitionOutcome::Applied);
    }
    let why: WhyNot = diesel::sql_query(WHY_NOT_SQL)
        .bind::<Uuid, _>(lease.task_id.0)
        .bind::<BigInt, _>(lease.token)
        .bind::<Text, _>("")
        .get_result(conn)
        .await?;
    if !why.found {
        return Ok(TransitionOutcome::NotFound);
    }
    StoreStats::add(&store.stats.fenced, 1);
    Ok(TransitionOutcome::Fenced)
}
