//! The fenced transitions out of `leased`.
//!
//! Each is a compare-and-set on (id, state = 'leased', lease_token): a
//! consumer whose lease was taken over, or that already finished, changes
//! nothing and gets [`TransitionOutcome::Fenced`]. Transitions that end an
//! attempt append its attempt row in the same statement, so the log and the
//! row can never disagree.

use diesel::sql_types::{BigInt, Bool, Integer, Nullable, SmallInt, Text, Timestamptz, Uuid};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::super::tables::enums::outcome_label;
use super::super::tables::rows::delay_millis;
use crate::domain::{AttemptOutcome, AttemptRecord, FailureReason, Lease};
use crate::store::contract::{StoreError, StoreStats, TransitionOutcome};
use crate::store::postgres::store::PgStore;
use crate::store::rules::lifecycle::{self, EndAttempt};

/// Ends the attempt: moves the row to `$5` and appends the attempt row with
/// outcome `$13`. The row is due again `$14` milliseconds after the
/// database's now when given (what a policy decision asks for), else at the
/// `available_at` it was claimed at.
/// `delivered_at`/`finalized_at` follow the target state, which keeps the
/// schema's CHECKs satisfied by construction.
const END_ATTEMPT_SQL: &str = r#"
WITH clock AS (SELECT coalesce($3, now()) AS now),
moved AS (
    UPDATE tasks t
    SET state = $5::task_state,
        lease_token = NULL,
        lease_owner = NULL,
        lease_expires_at = NULL,
        available_at = GREATEST(coalesce(clock.now + $14 * interval '1 millisecond', t.available_at),
                                t.not_before),
        failure_reason = $6,
        last_status = $7,
        delivered_at = CASE WHEN $5 = 'delivered' THEN clock.now END,
        finalized_at = CASE WHEN $5 IN ('delivered', 'failed') THEN clock.now END,
        updated_at = clock.now
    FROM clock
    WHERE t.id = $1 AND t.state = 'leased' AND t.lease_token = $2
    RETURNING t.id, t.attempt_count, t.available_at
)
INSERT INTO attempts (task_id, attempt_number, lease_token, consumer_id, started_at,
                      received_at, http_status, transport_error, retry_after_raw,
                      retry_after_deadline, outcome, next_available_at, recorded_at)
SELECT moved.id, moved.attempt_count, $2, $4, $8, $9, $7, $10, $11, $12,
       $13::attempt_outcome,
       CASE WHEN $14 IS NOT NULL THEN moved.available_at END, clock.now
FROM moved, clock
"#;

/// Why a guarded update touched no row: gone, already done by this very
/// lease (a repeated finish), or fenced.
pub(in crate::store::postgres) const WHY_NOT_SQL: &str = r#"
SELECT EXISTS (SELECT 1 FROM tasks WHERE id = $1) AS found,
       EXISTS (SELECT 1 FROM attempts
               WHERE task_id = $1 AND lease_token = $2 AND outcome::text = $3) AS repeated
"#;

/// A report from a consumer that lost its lease still tells what the
/// receiver saw; it is logged as `fenced` and changes nothing else.
const FENCED_SQL: &str = r#"
INSERT INTO attempts (task_id, attempt_number, lease_token, consumer_id, started_at,
                      received_at, http_status, transport_error, retry_after_raw,
                      retry_after_deadline, outcome, next_available_at, recorded_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'fenced', NULL, coalesce($11, now()))
"#;

#[derive(QueryableByName)]
pub(in crate::store::postgres) struct WhyNot {
    #[diesel(sql_type = Bool)]
    pub found: bool,
    #[diesel(sql_type = Bool)]
    pub repeated: bool,
}

/// The consumer lost track of an attempt it may have sent (its sender
/// failed mid-flight): the attempt counts, is logged as `abandoned`, and the
/// task is due again at once.
pub(in crate::store::postgres) async fn abandon(
    store: &PgStore,
    lease: &Lease,
    record: &AttemptRecord,
) -> Result<TransitionOutcome, StoreError> {
    end_attempt(store, lease, EndAttempt::abandoned(record)).await
}

pub(in crate::store::postgres) async fn fail(
    store: &PgStore,
    lease: &Lease,
    reason: &FailureReason,
    record: &AttemptRecord,
) -> Result<TransitionOutcome, StoreError> {
    end_attempt(store, lease, EndAttempt::failed(reason, record)).await
}

async fn end_attempt(
    store: &PgStore,
    lease: &Lease,
    end: EndAttempt<'_>,
) -> Result<TransitionOutcome, StoreError> {
    let mut conn = store.conn().await?;
    end_attempt_on(store, &mut conn, lease, end).await
}

/// Ends the attempt on `conn`, which may be inside a caller's transaction
/// (a finish that also pauses the destination).
pub(in crate::store::postgres) async fn end_attempt_on(
    store: &PgStore,
    conn: &mut diesel_async::AsyncPgConnection,
    lease: &Lease,
    end: EndAttempt<'_>,
) -> Result<TransitionOutcome, StoreError> {
    let EndAttempt {
        target: (target, outcome),
        delay,
        failure_reason,
        record,
    } = end;
    let status = record.http_status.map(status_column);
    let statement = diesel::sql_query(END_ATTEMPT_SQL)
        .bind::<Uuid, _>(lease.task_id.0)
        .bind::<BigInt, _>(lease.token)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Text, _>(&lease.owner)
        .bind::<Text, _>(target.as_str())
        .bind::<Nullable<Text>, _>(failure_reason)
        .bind::<Nullable<SmallInt>, _>(status)
        .bind::<Nullable<Timestamptz>, _>(record.started_at)
        .bind::<Nullable<Timestamptz>, _>(record.received_at)
        .bind::<Nullable<Text>, _>(&record.transport_error)
        .bind::<Nullable<Text>, _>(&record.retry_after_raw)
        .bind::<Nullable<Timestamptz>, _>(record.retry_after_deadline)
        .bind::<Text, _>(outcome_label(outcome))
        .bind::<Nullable<BigInt>, _>(delay.map(delay_millis));
    let touched = execute_finish(conn, statement).await?;
    if touched == 1 {
        return Ok(TransitionOutcome::Applied);
    }
    refused(store, conn, lease, outcome, record).await
}

/// Why a finish touched no row, told apart and logged: the task is gone,
/// this lease already finished it the same way (a harmless repeat), or the
/// lease moved on, which logs what the receiver said as `fenced`.
pub(in crate::store::postgres) async fn refused(
    store: &PgStore,
    conn: &mut diesel_async::AsyncPgConnection,
    lease: &Lease,
    outcome: AttemptOutcome,
    record: &AttemptRecord,
) -> Result<TransitionOutcome, StoreError> {
    let status = record.http_status.map(status_column);
    let why: WhyNot = diesel::sql_query(WHY_NOT_SQL)
        .bind::<Uuid, _>(lease.task_id.0)
        .bind::<BigInt, _>(lease.token)
        .bind::<Text, _>(repeat_label(outcome))
        .get_result(conn)
        .await?;
    if !why.found {
        return Ok(TransitionOutcome::NotFound);
    }
    if why.repeated {
        return Ok(TransitionOutcome::Applied);
    }
    diesel::sql_query(FENCED_SQL)
        .bind::<Uuid, _>(lease.task_id.0)
        .bind::<Integer, _>(lease.attempt.max(1))
        .bind::<BigInt, _>(lease.token)
        .bind::<Text, _>(&lease.owner)
        .bind::<Nullable<Timestamptz>, _>(record.started_at)
        .bind::<Nullable<Timestamptz>, _>(record.received_at)
        .bind::<Nullable<SmallInt>, _>(status)
        .bind::<Nullable<Text>, _>(&record.transport_error)
        .bind::<Nullable<Text>, _>(&record.retry_after_raw)
        .bind::<Nullable<Timestamptz>, _>(record.retry_after_deadline)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .execute(conn)
        .await?;
    StoreStats::add(&store.stats.fenced, 1);
    Ok(TransitionOutcome::Fenced)
}

/// Runs the finishing statement. It is one statement and so atomic on its
/// own; with failpoints compiled in, it runs inside an explicit transaction
/// with the `remit::in_finish` point between the statement and the commit,
/// so a test can crash or fail the process with the finish written but not
/// committed and watch it roll back.
async fn execute_finish<Q>(
    conn: &mut diesel_async::AsyncPgConnection,
    statement: Q,
) -> Result<usize, StoreError>
where
    Q: diesel_async::methods::ExecuteDsl<diesel_async::AsyncPgConnection> + Send,
{
    #[cfg(not(feature = "failpoints"))]
    {
        Ok(statement.execute(conn).await?)
    }
    #[cfg(feature = "failpoints")]
    {
        use diesel_async::AsyncConnection;
        let touched = conn
            .transaction::<_, diesel::result::Error, _>(async |conn| {
                let touched = statement.execute(conn).await?;
                fail::fail_point!(
                    crate::store::rules::IN_FINISH_FAILPOINT,
                    |arg: Option<String>| {
                        if arg.as_deref() == Some("exit") {
                            std::process::exit(crate::store::rules::CRASH_EXIT_CODE);
                        }
                        Err(diesel::result::Error::RollbackTransaction)
                    }
                );
                Ok(touched)
            })
            .await?;
        Ok(touched)
    }
}

/// The label of the logged outcome that makes a refused finish a harmless
/// repeat (`lifecycle::repeat_of`); none matches the empty label.
pub(in crate::store::postgres) fn repeat_label(outcome: AttemptOutcome) -> &'static str {
    lifecycle::repeat_of(Some(outcome)).map_or("", outcome_label)
}

/// HTTP statuses are three digits; anything else is clamped rather than
/// failing the transition.
pub(in crate::store::postgres) fn status_column(status: u16) -> i16 {
    i16::try_from(status).unwrap_or(i16::MAX)
}
