//! The shared token bucket of a destination: every process of the region
//! takes its tokens from the same row, so the configured rate holds across
//! all of them. Tokens refill continuously at `rate` per second up to
//! `burst`; the row lock serialises takers for the length of one UPDATE.
//! A taker that waited on the lock may carry an older `now` than the last
//! writer: time never runs backwards for the bucket, and nothing is granted
//! below zero.
//!
//! Takes for many destinations go in one statement, so a process serving
//! many destinations pays one round trip for all of its throttles' asks.

use std::collections::HashMap;

use diesel::sql_types::{Array, Double, Integer, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::prepared::prepared;
use super::{PgStore, StoreError, TokenRequest, Tokens};

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
pub(super) const TAKE_SQL: &str = r#"
WITH clock AS (
    SELECT coalesce($1, now()) AS now,
           set_config('synchronous_commit', 'off', true) AS synchronous_commit
),
asked AS (
    SELECT * FROM unnest($2::text[], $3::float8[], $4::float8[], $5::int4[])
        AS a(id, rate, burst, want)
),
current AS (
    SELECT d.id, a.want,
           LEAST(a.burst, coalesce(d.rate_tokens, a.burst)
                          + GREATEST(0, EXTRACT(EPOCH FROM clock.now - coalesce(d.rate_refilled_at, clock.now))) * a.rate)
               AS tokens,
           GREATEST(clock.now, coalesce(d.rate_refilled_at, clock.now)) AS refilled_at
    FROM destinations d JOIN asked a ON a.id = d.id, clock
    ORDER BY d.id
    FOR NO KEY UPDATE OF d
),
taken AS (
    SELECT id, tokens, refilled_at, GREATEST(0, LEAST(floor(tokens), want))::int AS granted
    FROM current
)
UPDATE destinations d
SET rate_tokens = taken.tokens - taken.granted,
    rate_refilled_at = taken.refilled_at
FROM taken
WHERE d.id = taken.id
RETURNING d.id AS id, taken.granted AS granted, taken.tokens - taken.granted AS remaining
"#;

#[derive(QueryableByName)]
struct Taken {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Integer)]
    granted: i32,
    #[diesel(sql_type = Double)]
    remaining: f64,
}

/// One bucket's row as the statement binds it: asks for the same
/// destination are summed and shared out again in order afterwards.
struct Bucket {
    rate: f64,
    burst: f64,
    want: i32,
}

pub(super) async fn take_tokens_many(
    store: &PgStore,
    asks: &[TokenRequest],
) -> Result<Vec<Option<Tokens>>, StoreError> {
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
    let mut left: HashMap<String, (u32, f64)> = taken
        .into_iter()
        .map(|t| (t.id, (u32::try_from(t.granted).unwrap_or(0), t.remaining)))
        .collect();
    Ok(asks
        .iter()
        .map(|ask| {
            let (granted, remaining) = left.get_mut(ask.destination.as_str())?;
            let mine = (*granted).min(ask.want.max(1));
            *granted -= mine;
            if mine > 0 {
                return Some(Tokens::Granted(mine));
            }
            let rate = buckets.get(ask.destination.as_str())?.rate;
            let missing = (1.0 - *remaining).max(0.0);
            Some(Tokens::WaitFor(std::time::Duration::from_secs_f64(
                missing / rate,
            )))
        })
        .collect())
}
