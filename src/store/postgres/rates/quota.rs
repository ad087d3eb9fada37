//! What receivers announced of their quotas, written to their
//! destinations' rows in one statement per batch (`store::rules::quota` holds the
//! rule). Only a response that announced something is written, so a
//! receiver that announces nothing costs no statement at all.

use diesel::sql_types::{Array, BigInt, Double, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;

use super::super::connection::prepared::prepared;
use crate::store::contract::{QuotaNote, StoreError};
use crate::store::postgres::store::PgStore;
use crate::store::rules::quota;

/// Writes each destination's newest announcement (`store::rules::quota` states
/// the rule): what remains, less the tokens granted after the answered
/// request's own (`$6`, its token's number); its reset on the database's
/// clock; the limit, when it was learned, the token's number, and the
/// window it renews to (`$7`, when the limit is known too). An
/// announcement placed before the stored one is left out, unless its
/// request went out (`$8`) after the stored one was learned. Rows are
/// locked in id order, as every statement that locks several destinations
/// does, so a batch never deadlocks with a token take or a finish. Like a
/// take it does not wait for the disk flush: a crash forgets at most the
/// last announcements, which the next responses repeat.
const LEARN_SQL: &str = r#"
WITH clock AS (
    SELECT coalesce($1, now()) AS now,
           set_config('synchronous_commit', 'off', true) AS synchronous_commit
),
learned AS (
    SELECT * FROM unnest($2::text[], $3::float8[], $4::int8[], $5::int8[], $6::int8[],
                         $7::int8[], $8::timestamptz[])
        AS l(id, remaining, resets_in_ms, quota_limit, token, window_ms, sent_at)
),
locked AS (
    SELECT d.id FROM destinations d JOIN learned l ON l.id = d.id
    ORDER BY d.id
    FOR NO KEY UPDATE OF d
)
UPDATE destinations d
SET quota_remaining = GREATEST(0, l.remaining - GREATEST(0, d.rate_granted - l.token)),
    quota_resets_at = clock.now + l.resets_in_ms * interval '1 millisecond',
    quota_limit = l.quota_limit,
    quota_learned_at = clock.now,
    -- The highest token seen: a note that won by when it was sent does not
    -- lower it (GREATEST skips a NULL).
    quota_token = GREATEST(d.quota_token, l.token),
    quota_window_ms = l.window_ms
FROM learned l, locked, clock
WHERE d.id = l.id AND locked.id = d.id
  AND (d.quota_token IS NULL OR l.token >= d.quota_token OR l.sent_at > d.quota_learned_at)
"#;

pub(in crate::store::postgres) async fn learn_quotas(
    store: &PgStore,
    notes: &[QuotaNote],
) -> Result<(), StoreError> {
    let latest = quota::latest(notes);
    if latest.is_empty() {
        return Ok(());
    }
    let ids: Vec<&str> = latest.iter().map(|n| n.destination.as_str()).collect();
    let remaining: Vec<f64> = latest.iter().map(|n| n.quota.remaining as f64).collect();
    let resets_in: Vec<i64> = latest
        .iter()
        .map(|n| n.quota.resets_in.num_milliseconds().max(0))
        .collect();
    let limits: Vec<Option<i64>> = latest
        .iter()
        .map(|n| n.quota.limit.and_then(|l| i64::try_from(l).ok()))
        .collect();
    let tokens: Vec<i64> = latest
        .iter()
        .map(|n| i64::try_from(n.token).unwrap_or(i64::MAX))
        .collect();
    let windows: Vec<Option<i64>> = latest
        .iter()
        .map(|n| {
            n.quota
                .limit
                .and(n.quota.window)
                .map(|w| w.num_milliseconds().max(1))
        })
        .collect();
    let mut conn = store.conn().await?;
    prepared(LEARN_SQL)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Array<Text>, _>(ids)
        .bind::<Array<Double>, _>(remaining)
        .bind::<Array<BigInt>, _>(resets_in)
        .bind::<Array<Nullable<BigInt>>, _>(limits)
        .bind::<Array<BigInt>, _>(tokens)
        .bind::<Array<Nullable<BigInt>>, _>(windows)
        .bind::<Array<Timestamptz>, _>(latest.iter().map(|n| n.sent_at).collect::<Vec<_>>())
        .execute(&mut conn)
        .await?;
    Ok(())
}
