//! The shared token bucket of a destination: every process of the region
//! takes its tokens from the same row, so the configured rate holds across
//! all of them. Tokens refill continuously at `rate` per second up to
//! `burst`; the row lock serialises takers for the length of one UPDATE.
//! A taker that waited on the lock may carry an older `now` than the last
//! writer: time never runs backwards for the bucket, and nothing is granted
//! below zero.
//!
//! A quota the receiver announced (`quota.rs` writes it) paces the bucket
//! until it resets, by the rule `store::rules::bucket` states for the other
//! stores: the rate at which what remains lasts until the reset, never
//! above the configured one, the bucket capped at what remains, and
//! nothing granted while nothing remains. At the reset a quota with a
//! window renews once (`in_force`): its limit until the end of the window
//! that holds now.
//!
//! Takes for many destinations go in one statement, so a process serving
//! many destinations pays one round trip for all of its throttles' asks.
//! The statement also counts what it grants (`rate_granted`, which numbers
//! the tokens): one more column of the row it rewrites anyway, so it costs
//! no round trip and no lock beyond the take's own.

use std::collections::HashMap;

use diesel::sql_types::{Array, BigInt, Double, Integer, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::super::connection::prepared::prepared;
use crate::store::contract::{RateGrant, RateRequest, StoreError};
use crate::store::postgres::store::PgStore;

/// Refills and takes from each named bucket. Rows are locked in id order,
/// as every statement that locks several destinations does, so a take and
/// a batch of pauses asking for overlapping destinations never deadlock.
///
/// One statement, so no connection is ever left inside a transaction by a
/// take whose future was dropped halfway (at shutdown, say): PostgreSQL
/// commits or rolls it back on its own. It commits without waiting for the
/// disk flush (`set_config(…, true)` holds for this statement's implicit
/// transaction only): should the database crash, the bucket's last moments
/// are forgotten and it grants a few tokens twice, while a take waiting on
/// a flush would halve what a destination can be sent.
pub const TAKE_SQL: &str = r#"
WITH clock AS (
    SELECT coalesce($1, now()) AS now,
           set_config('synchronous_commit', 'off', true) AS synchronous_commit
),
asked AS (
    SELECT * FROM unnest($2::text[], $3::float8[], $4::float8[], $5::int4[])
        AS a(id, rate, burst, want)
),
locked AS (
    SELECT d.id, a.want, a.rate AS configured, a.burst, d.rate_tokens, d.rate_refilled_at,
           d.quota_remaining, d.quota_resets_at, d.quota_limit, d.quota_window_ms, clock.now,
           coalesce(d.quota_resets_at > clock.now, false) AS in_window,
           coalesce(d.quota_resets_at <= clock.now AND d.quota_window_ms > 0
                    AND d.quota_limit IS NOT NULL, false) AS renews
    FROM destinations d JOIN asked a ON a.id = d.id, clock
    ORDER BY d.id
    FOR NO KEY UPDATE OF d
),
in_force AS (
    SELECT l.*,
           l.in_window OR l.renews AS paced,
           CASE WHEN l.in_window THEN l.quota_remaining
                WHEN l.renews THEN l.quota_limit::float8 END AS q_remaining,
           CASE WHEN l.in_window THEN l.quota_resets_at
                WHEN l.renews THEN l.quota_resets_at
                    + (floor(EXTRACT(EPOCH FROM l.now - l.quota_resets_at) * 1000000
                             / (l.quota_window_ms * 1000)) + 1)
                      * l.quota_window_ms * interval '1 millisecond' END AS q_resets_at
    FROM locked l
),
pace AS (
    SELECT f.*,
           CASE WHEN f.paced THEN GREATEST(1e-3, LEAST(f.configured,
                    GREATEST(0, f.q_remaining)
                    / GREATEST(1e-3, EXTRACT(EPOCH FROM f.q_resets_at - f.now))))
                ELSE f.configured END AS rate,
           CASE WHEN f.paced THEN LEAST(f.burst, floor(GREATEST(0, f.q_remaining)))
                ELSE f.burst END AS cap
    FROM in_force f
),
current AS (
    SELECT p.*,
           LEAST(p.cap, coalesce(p.rate_tokens, p.cap)
                        + GREATEST(0, EXTRACT(EPOCH FROM p.now - coalesce(p.rate_refilled_at, p.now))) * p.rate)
               AS tokens,
           GREATEST(p.now, coalesce(p.rate_refilled_at, p.now)) AS refilled_at
    FROM pace p
),
taken AS (
    SELECT c.*, GREATEST(0, LEAST(floor(c.tokens), c.want))::int AS granted
    FROM current c
)
UPDATE destinations d
SET rate_tokens = taken.tokens - taken.granted,
    rate_refilled_at = taken.refilled_at,
    rate_granted = d.rate_granted + taken.granted,
    quota_remaining = CASE WHEN taken.paced
                           THEN GREATEST(0, taken.q_remaining - taken.granted)
                           ELSE d.quota_remaining END,
    quota_resets_at = CASE WHEN taken.paced THEN taken.q_resets_at ELSE d.quota_resets_at END,
    quota_window_ms = CASE WHEN taken.renews THEN NULL ELSE d.quota_window_ms END
FROM taken
WHERE d.id = taken.id
RETURNING d.id AS id, taken.granted AS granted, d.rate_granted AS last,
          taken.tokens - taken.granted AS remaining,
          taken.rate AS rate,
          CASE WHEN taken.paced AND taken.q_remaining < 1
               THEN EXTRACT(EPOCH FROM taken.q_resets_at - taken.now)::float8 END AS held_for
"#;

#[derive(QueryableByName)]
struct Taken {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Integer)]
    granted: i32,
    /// The number of the last token granted (the count after the take).
    #[diesel(sql_type = BigInt)]
    last: i64,
    #[diesel(sql_type = Double)]
    remaining: f64,
    /// The rate the take refilled at: the configured one, or lower while
    /// an announced quota paces the destination.
    #[diesel(sql_type = Double)]
    rate: f64,
    /// Seconds until the announced quota resets, when none of it remains.
    #[diesel(sql_type = Nullable<Double>)]
    held_for: Option<f64>,
}

/// One bucket's row as the statement binds it: asks for the same
/// destination are summed and shared out again in order afterwards.
struct Bucket {
    rate: f64,
    burst: f64,
    want: i32,
}

pub(in crate::store::postgres) async fn take_tokens_many(
    store: &PgStore,
    asks: &[RateRequest],
) -> Result<Vec<Option<RateGrant>>, StoreError> {
    if asks.is_empty() {
        return Ok(Vec::new());
    }
    let mut buckets: HashMap<&str, Bucket> = HashMap::new();
    for ask in asks {
        let bucket = buckets.entry(ask.destination.as_str()).or_insert(Bucket {
            rate: ask.rate_per_second.max(1e-3),
            burst: f64::from(ask.burst.max(1)),
            want: 0,
        });
        let want = i32::try_from(ask.want.max(1)).unwrap_or(i32::MAX);
        bucket.want = bucket.want.saturating_add(want);
    }
    let mut ids = Vec::with_capacity(buckets.len());
    let (mut rates, mut bursts, mut wants) = (Vec::new(), Vec::new(), Vec::new());
    for (id, bucket) in &buckets {
        ids.push(*id);
        rates.push(bucket.rate);
        bursts.push(bucket.burst);
        wants.push(bucket.want);
    }
    let mut conn = store.conn().await?;
    let taken: Vec<Taken> = prepared(TAKE_SQL)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Array<Text>, _>(ids)
        .bind::<Array<Double>, _>(rates)
        .bind::<Array<Double>, _>(bursts)
        .bind::<Array<Integer>, _>(wants)
        .load(&mut conn)
        .await?;
    let mut left: HashMap<String, Taken> = taken.into_iter().map(|t| (t.id.clone(), t)).collect();
    Ok(asks
        .iter()
        .map(|ask| {
            let bucket = left.get_mut(ask.destination.as_str())?;
            let granted = u32::try_from(bucket.granted).unwrap_or(0);
            let mine = granted.min(ask.want.max(1));
            bucket.granted -= i32::try_from(mine).unwrap_or(0);
            if mine > 0 {
                // Shared out in order: the first ask gets the lowest
                // numbers, and what is left to share out is numbered last.
                let last = bucket.last.saturating_sub(i64::from(bucket.granted));
                return Some(RateGrant::Granted {
                    tokens: mine,
                    last: u64::try_from(last).unwrap_or(0),
                });
            }
            let wait = match bucket.held_for {
                Some(held) => held.max(0.0),
                None => (1.0 - bucket.remaining).max(0.0) / bucket.rate.max(1e-3),
            };
            Some(RateGrant::WaitFor(
                std::time::Duration::try_from_secs_f64(wait)
                    .unwrap_or(std::time::Duration::from_secs(60)),
            ))
        })
        .collect())
}
