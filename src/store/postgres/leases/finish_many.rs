//! Many finishes in one round trip: the destination pauses the batch asks
//! for, then every row's move and its attempt row in one statement over
//! arrays (`unnest`), each row still guarded by its own lease token. Rows a
//! stale lease could not move are told apart one by one afterwards, which
//! is rare. Both statements are prepared once per connection.
//!
//! With pauses in the batch (or failpoints compiled in) it all runs in one
//! transaction, so a receiver's pause is never recorded without the
//! attempt that asked for it, or the other way round. Without pauses the
//! one statement is atomic on its own.

use std::collections::HashSet;

use diesel::sql_types::{Array, BigInt, Integer, Nullable, SmallInt, Text, Timestamptz, Uuid};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::super::connection::notify::DESTINATION_CHANNEL;
use super::super::connection::prepared::prepared;
use super::super::tables::enums::outcome_label;
use super::super::tables::rows::{corrupt, delay_millis};
use super::transitions::{refused, status_column};
use crate::domain::{bucket_bounds_us, AttemptClass, AttemptRecord, DestinationId};
use crate::policy::{self, Health};
use crate::store::contract::{AutoDisabled, Finish, Finished, StoreError, TransitionOutcome};
use crate::store::postgres::store::PgStore;
use crate::store::rules::lifecycle::EndAttempt;

/// Moves every row whose lease token still matches, logs its attempt,
/// and counts it into its destination's hour. `available_at` is the
/// decision's delay after the database's now (never before the task's
/// deadline), or unchanged when there is none.
///
/// $1 now (NULL: the database's); one array element per finish: $2 task,
/// $3 lease token, $4 lease owner, $5 target state, $6 outcome, $7 delay in
/// ms, $8 failure reason, $9 status, $10 request start, $11 answer, $12
/// transport error, $13 raw Retry-After, $14 its deadline, $15 health code
/// (`policy::Health`), $16 last error, $17 class (`domain::AttemptClass`,
/// NULL: not counted), $18 send latency in µs; then $19 and $20 the disable
/// rule's seconds and failures, $21 the histograms' bucket bounds in µs.
pub const END_MANY_SQL: &str = concat!(
    r#"
-- The queue's rows follow this statement's moves in `dequeued` and
-- `requeued` below, so the row trigger that would do it one call a row
-- (`task_queue_updated`) is told to leave them: the setting holds until the
-- transaction ends (nothing after this statement in a finish's transaction
-- writes `tasks`), and `clock` is read before any row moves.
WITH clock AS (SELECT coalesce($1, now()) AS now,
                      set_config('remit.queue_follows', 'statement', true) AS queue_follows),
input AS (
    SELECT * FROM unnest($2::uuid[], $3::int8[], $4::text[], $5::text[], $6::text[],
                         $7::int8[], $8::text[], $9::int2[], $10::timestamptz[],
                         $11::timestamptz[], $12::text[], $13::text[], $14::timestamptz[],
                         $15::int2[], $16::text[], $17::int2[], $18::int8[]) WITH ORDINALITY
        AS i(id, token, owner, target, outcome, delay_ms, failure_reason, status,
             started_at, received_at, transport_error, retry_after_raw, retry_after_deadline,
             health, last_error, class, latency_us, n)
),
rule AS (SELECT $19::int8 AS after_seconds, $20::int4 AS failures),
buckets AS (SELECT $21::int8[] AS bounds),
moved AS (
    UPDATE tasks t
    SET state = i.target::task_state,
        lease_token = NULL,
        lease_owner = NULL,
        lease_expires_at = NULL,
        available_at = GREATEST(coalesce(clock.now + i.delay_ms * interval '1 millisecond',
                                         t.available_at),
                                t.not_before),
        failure_reason = i.failure_reason,
        last_status = i.status,
        delivered_at = CASE WHEN i.target = 'delivered' THEN clock.now END,
        finalized_at = CASE WHEN i.target IN ('delivered', 'failed') THEN clock.now END,
        updated_at = clock.now
    FROM input i, clock
    WHERE t.id = i.id AND t.state = 'leased' AND t.lease_token = i.token
    RETURNING t.id, t.attempt_count, t.available_at, i.token, i.owner, i.outcome, i.delay_ms,
              i.status, i.started_at, i.received_at, i.transport_error, i.retry_after_raw,
              i.retry_after_deadline, t.destination_id, i.health, i.last_error, i.n,
              t.not_before, i.class, i.latency_us, t.region, t.state, t.finalized_at
),
-- What `task_queue_updated` would do for each moved row, set-wise: an
-- ended task leaves the queue and enters the end log; one that waits again
-- keeps its entry at its new time (nothing else the queue copies changes
-- here). Every id is one probe by primary key, as in the claim.
dequeued AS (
    DELETE FROM task_queue q
    WHERE q.task_id = ANY (ARRAY(SELECT id FROM moved WHERE finalized_at IS NOT NULL))
),
ended AS (
    INSERT INTO task_ends (task_id, region, finalized_at)
    SELECT id, region, finalized_at FROM moved WHERE finalized_at IS NOT NULL
),
requeued AS (
    UPDATE task_queue q
    SET available_at = m.available_at, retrying = m.state = 'retry_wait'
    FROM moved m
    WHERE q.task_id = ANY (ARRAY(SELECT id FROM moved WHERE finalized_at IS NULL))
      AND m.id = q.task_id
),
logged AS (
    INSERT INTO attempts (task_id, attempt_number, lease_token, consumer_id, started_at,
                          received_at, http_status, transport_error, retry_after_raw,
                          retry_after_deadline, outcome, next_available_at, recorded_at)
    SELECT moved.id, moved.attempt_count, moved.token, moved.owner, moved.started_at,
           moved.received_at, moved.status, moved.transport_error, moved.retry_after_raw,
           moved.retry_after_deadline, moved.outcome::attempt_outcome,
           CASE WHEN moved.delay_ms IS NOT NULL THEN moved.available_at END, clock.now
    FROM moved, clock
),
-- The health rule (store/health.rs) in the batch's order, exactly as if
-- each finish came on its own (health: 1 failed, 0 succeeded, NULL
-- neither). The outcomes of a destination fall into runs of failures:
-- run 0 carries on the streak the row has, run k starts after the
-- batch's k-th success from nothing.
judged AS (
    SELECT destination_id AS id, health, last_error, n,
           count(*) FILTER (WHERE health = 0) OVER (PARTITION BY destination_id ORDER BY n)
               AS run
    FROM moved WHERE health IS NOT NULL
),
batch AS (
    SELECT id, max(run) AS last_run, count(*) FILTER (WHERE health = 1) AS failed
    FROM judged GROUP BY id
),
-- Only rows with something to write are locked, in id order (as the token
-- take locks them): a success on a destination with no streak and no last
-- error writes nothing, nor does a deleted destination's tombstone (it
-- keeps no health).
-- FOR NO KEY UPDATE reads the latest committed row.
locked AS (
    SELECT d.id, d.enabled, d.failure_streak, d.failure_streak_since, d.last_error,
           d.disable_after_seconds, d.disable_after_failures
    FROM destinations d JOIN batch b ON b.id = d.id
    WHERE (b.failed > 0 OR d.failure_streak > 0 OR d.last_error IS NOT NULL)
      AND d.deleted_at IS NULL
    ORDER BY d.id
    FOR NO KEY UPDATE OF d
),
-- The streak as each failure leaves it (policy::Streak::grow).
steps AS (
    SELECT j.id, j.n, j.run, j.last_error, c.carried,
           CASE WHEN c.carried THEN l.failure_streak ELSE 0 END
               + row_number() OVER (PARTITION BY j.id, j.run ORDER BY j.n) AS count,
           CASE WHEN c.carried THEN l.failure_streak_since ELSE clock.now END AS since
    FROM judged j JOIN locked l ON l.id = j.id, clock,
         LATERAL (SELECT j.run = 0 AND l.failure_streak_since IS NOT NULL AS carried) c
    WHERE j.health = 1
),
-- policy::disables at each failure, by the destination's own thresholds or
-- the store's: the first long enough in both count and time disables an
-- enabled destination, and its streak and error are the event's.
tip AS (
    SELECT DISTINCT ON (s.id) s.id, s.count, s.since, s.last_error
    FROM steps s JOIN locked l ON l.id = s.id, rule, clock
    WHERE l.enabled
      AND s.count >= coalesce(l.disable_after_failures, rule.failures)
      AND clock.now - s.since
          >= coalesce(l.disable_after_seconds, rule.after_seconds) * interval '1 second'
    ORDER BY s.id, s.n
),
-- What the batch leaves: the streak of its last run and the error of its
-- last failure, with its time; none of them when a success ended the
-- batch (the destination recovered). A destination with no failure in the
-- batch has no `latest` row: its batch ended with a success.
latest AS (
    SELECT DISTINCT ON (id) id, run, count, since, last_error FROM steps ORDER BY id, n DESC
),
verdict AS (
    SELECT l.id,
           CASE WHEN la.run = b.last_run THEN la.count ELSE 0 END::int AS count,
           CASE WHEN la.run = b.last_run THEN la.since END AS since,
           CASE WHEN la.run = b.last_run THEN la.last_error END AS last_error,
           CASE WHEN la.run = b.last_run THEN clock.now END AS last_error_at,
           t.id IS NOT NULL AS tips, t.count AS tip_count,
           GREATEST(0, floor(extract(epoch FROM clock.now - t.since)))::int8 AS tip_seconds,
           t.last_error AS tip_error
    FROM locked l JOIN batch b ON b.id = l.id
         LEFT JOIN latest la ON la.id = l.id
         LEFT JOIN tip t ON t.id = l.id,
         clock
),
healed AS (
    UPDATE destinations d
    SET failure_streak = v.count,
        failure_streak_since = v.since,
        last_error = v.last_error,
        last_error_at = v.last_error_at,
        enabled = d.enabled AND NOT v.tips,
        -- The words of policy::auto_reason.
        disabled_reason = CASE WHEN v.tips THEN 'auto: ' || v.tip_count
            || CASE WHEN v.tip_count = 1 THEN ' failure' ELSE ' failures' END || ' in a row over '
            || CASE WHEN v.tip_seconds = 1 THEN '1 second'
                    WHEN v.tip_seconds < 120 THEN v.tip_seconds || ' seconds'
                    WHEN v.tip_seconds < 7200 THEN (v.tip_seconds / 60) || ' minutes'
                    WHEN v.tip_seconds < 172800 THEN (v.tip_seconds / 3600) || ' hours'
                    ELSE (v.tip_seconds / 86400) || ' days' END ELSE d.disabled_reason END,
        disabled_at = CASE WHEN v.tips THEN clock.now ELSE d.disabled_at END,
        updated_at = clock.now
    FROM verdict v, clock
    WHERE d.id = v.id
    RETURNING d.id, d.region, d.disabled_reason, v.tip_error, v.tips
),
-- The operational event, in the outbox, with the disable that makes it:
-- the destination as the tipping failure left it.
announced AS (
    INSERT INTO destination_events (id, kind, destination_id, region, reason, at, last_error)
    SELECT gen_random_uuid(), 'destination.disabled', h.id, h.region, h.disabled_reason,
           clock.now, h.tip_error
    FROM healed h, clock
    WHERE h.tips
),
"#,
    // The destinations' hours (`destination_stats`): `counted`, `tallied`,
    // `histograms`, `kept`.
    count_hours!(),
    r#"
SELECT id, token, NULL::text AS disabled FROM moved
UNION ALL
SELECT NULL, NULL, id FROM healed WHERE tips
"#
);

/// Pauses each destination for the longest pause the batch asks of it,
/// from the database's now (a later pause already in force wins), and
/// tells every process when the transaction commits. Every destination of
/// the batch (`$4`), not only the paused ones, is locked first, in one pass
/// in id order as the token take locks them (`rate.rs`): the end statement
/// that follows in the same transaction may lock a destination for its
/// failure streak, and a second pass would take locks out of order and
/// could deadlock with a take or another finish.
pub const PAUSE_MANY_SQL: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now),
asked AS (
    SELECT id, max(ms) AS ms FROM unnest($2::text[], $3::int8[]) AS a(id, ms) GROUP BY id
),
locked AS (
    SELECT d.id FROM destinations d WHERE d.id = ANY($4::text[])
    ORDER BY d.id
    FOR NO KEY UPDATE OF d
),
-- Read every locked row before anything is updated.
held AS (SELECT count(*) AS n FROM locked),
paused AS (
    UPDATE destinations d
    SET paused_until = GREATEST(d.paused_until, clock.now + asked.ms * interval '1 millisecond'),
        updated_at = now()
    FROM asked, clock, held
    WHERE d.id = asked.id AND held.n >= 0
    RETURNING d.id
)
SELECT pg_notify($5, id) FROM paused
"#;

/// A moved row (`id`, `token`), or a destination the batch disabled.
#[derive(QueryableByName)]
struct Moved {
    #[diesel(sql_type = Nullable<Uuid>)]
    id: Option<uuid::Uuid>,
    #[diesel(sql_type = Nullable<BigInt>)]
    token: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    disabled: Option<String>,
}

pub(in crate::store::postgres) async fn finish_many(
    store: &PgStore,
    batch: &[Finish],
) -> Result<Finished, StoreError> {
    if batch.is_empty() {
        return Ok(Finished::default());
    }
    let mut conn = store.conn().await?;
    let pauses: Vec<(&str, i64)> = batch
        .iter()
        .filter_map(|f| {
            let delay = f.decision.pause_delay()?;
            Some((f.destination.as_str(), delay_millis(delay)))
        })
        .collect();
    if pauses.is_empty() && !cfg!(feature = "failpoints") {
        return write(store, &mut conn, batch, &pauses).await;
    }
    conn.transaction::<_, StoreError, _>(async |conn| {
        let outcomes = write(store, conn, batch, &pauses).await?;
        #[cfg(feature = "failpoints")]
        fail::fail_point!(crate::store::rules::IN_FINISH_FAILPOINT, |arg: Option<
            String,
        >| {
            if arg.as_deref() == Some("exit") {
                std::process::exit(crate::store::rules::CRASH_EXIT_CODE);
            }
            Err(StoreError::Query(
                diesel::result::Error::RollbackTransaction,
            ))
        });
        Ok(outcomes)
    })
    .await
}

async fn write(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    batch: &[Finish],
    pauses: &[(&str, i64)],
) -> Result<Finished, StoreError> {
    if !pauses.is_empty() {
        let (ids, ms): (Vec<&str>, Vec<i64>) = pauses.iter().copied().unzip();
        prepared(PAUSE_MANY_SQL)
            .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
            .bind::<Array<Text>, _>(ids)
            .bind::<Array<BigInt>, _>(ms)
            .bind::<Array<Text>, _>(
                batch
                    .iter()
                    .map(|f| f.destination.as_str())
                    .collect::<Vec<_>>(),
            )
            .bind::<Text, _>(DESTINATION_CHANNEL)
            .execute(conn)
            .await?;
    }

    let ends: Vec<EndAttempt<'_>> = batch.iter().map(|f| EndAttempt::of(&f.decision)).collect();
    let rows = prepared(END_MANY_SQL)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Array<Uuid>, _>(batch.iter().map(|f| f.lease.task_id.0).collect::<Vec<_>>())
        .bind::<Array<BigInt>, _>(batch.iter().map(|f| f.lease.token).collect::<Vec<_>>())
        .bind::<Array<Text>, _>(
            batch
                .iter()
                .map(|f| f.lease.owner.as_str())
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Text>, _>(ends.iter().map(|e| e.target.0.as_str()).collect::<Vec<_>>())
        .bind::<Array<Text>, _>(
            ends.iter()
                .map(|e| outcome_label(e.target.1))
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<BigInt>>, _>(
            ends.iter()
                .map(|e| e.delay.map(delay_millis))
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<Text>>, _>(
            ends.iter()
                .map(|e| e.failure_reason.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<SmallInt>>, _>(
            ends.iter()
                .map(|e| e.record.http_status.map(status_column))
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<Timestamptz>>, _>(
            ends.iter().map(|e| e.record.started_at).collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<Timestamptz>>, _>(
            ends.iter()
                .map(|e| e.record.received_at)
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<Text>>, _>(
            ends.iter()
                .map(|e| e.record.transport_error.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<Text>>, _>(
            ends.iter()
                .map(|e| e.record.retry_after_raw.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<Timestamptz>>, _>(
            ends.iter()
                .map(|e| e.record.retry_after_deadline)
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<SmallInt>>, _>(
            ends.iter()
                .map(|e| Health::of(e.record).code())
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<Text>>, _>(
            ends.iter()
                .map(|e| policy::last_error(e.record))
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<SmallInt>>, _>(
            ends.iter()
                .map(|e| AttemptClass::of(e.record).map(AttemptClass::code))
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<BigInt>>, _>(
            ends.iter()
                .map(|e| latency_us(e.record))
                .collect::<Vec<_>>(),
        )
        .bind::<BigInt, _>(store.disable_rule.after.num_seconds())
        .bind::<Integer, _>(store.disable_rule.failures.min(i32::MAX as u32) as i32)
        .bind::<Array<BigInt>, _>(bucket_bounds_us())
        .load::<Moved>(conn)
        .await?;
    let mut disabled_ids = Vec::new();
    let moved = rows
        .into_iter()
        .filter_map(|m| match (m.id, m.token, m.disabled) {
            (Some(id), Some(token), _) => Some((id, token)),
            (_, _, Some(d)) => {
                disabled_ids.push(d);
                None
            }
            _ => None,
        })
        .collect::<HashSet<_>>();

    let mut outcomes = Vec::with_capacity(batch.len());
    for (finish, end) in batch.iter().zip(&ends) {
        let lease = &finish.lease;
        let applied = moved.contains(&(lease.task_id.0, lease.token));
        outcomes.push(if applied {
            TransitionOutcome::Applied
        } else {
            refused(store, conn, lease, end.target.1, end.record).await?
        });
    }
    let mut disabled = Vec::with_capacity(disabled_ids.len());
    for id in disabled_ids {
        diesel::sql_query("SELECT pg_notify($1, $2)")
            .bind::<Text, _>(DESTINATION_CHANNEL)
            .bind::<Text, _>(&id)
            .execute(conn)
            .await?;
        let id = DestinationId::new(&id).map_err(|e| corrupt("destinations.id", e))?;
        if let Some(destination) =
            super::super::destinations::destination_rows::destination_on(conn, &id).await?
        {
            disabled.push(AutoDisabled { destination });
        }
    }
    Ok(Finished { outcomes, disabled })
}

/// The request's send latency in microseconds, when it has a start and an
/// end.
fn latency_us(record: &AttemptRecord) -> Option<i64> {
    let (started, received) = (record.started_at?, record.received_at?);
    (received - started).num_microseconds()
}
