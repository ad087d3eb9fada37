//! A destination's shared token bucket on SQLite, paced by the quota its
//! receiver announced, and the announcements themselves: the rules of
//! `store::rules::bucket` and `store::rules::quota`, applied to the row inside the
//! write transaction.

use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Double, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use super::rows::{maybe, micros};
use crate::store::contract::{QuotaNote, RateGrant, RateRequest, StoreError};
use crate::store::rules::bucket::{self, Bucket, Learned, Renewal};
use crate::store::rules::columns::corrupt;
use crate::store::rules::quota;

/// The columns a take reads.
#[derive(QueryableByName)]
struct BucketRow {
    #[diesel(sql_type = Nullable<Double>)]
    rate_tokens: Option<f64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    rate_refilled_at: Option<i64>,
    #[diesel(sql_type = Nullable<Double>)]
    quota_remaining: Option<f64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    quota_resets_at: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    quota_limit: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    quota_window_ms: Option<i64>,
    #[diesel(sql_type = BigInt)]
    rate_granted: i64,
}

impl BucketRow {
    fn bucket(&self) -> Result<Bucket, StoreError> {
        let resets_at = maybe("destinations.quota_resets_at", self.quota_resets_at)?;
        let limit = self
            .quota_limit
            .map(|l| count("destinations.quota_limit", l))
            .transpose()?;
        let renews = limit
            .zip(self.quota_window_ms.filter(|&ms| ms > 0))
            .map(|(limit, ms)| Renewal {
                limit,
                window: chrono::Duration::milliseconds(ms),
            });
        Ok(Bucket {
            tokens: self.rate_tokens,
            refilled_at: maybe("destinations.rate_refilled_at", self.rate_refilled_at)?,
            quota: self
                .quota_remaining
                .zip(resets_at)
                .map(|(remaining, resets_at)| Learned {
                    remaining,
                    resets_at,
                    renews,
                }),
            granted: count("destinations.rate_granted", self.rate_granted)?,
        })
    }
}

/// A count (of tokens, or requests) as SQLite keeps it: an INTEGER, never
/// negative.
fn count(column: &'static str, n: i64) -> Result<u64, StoreError> {
    u64::try_from(n).map_err(|_| corrupt(column, "negative"))
}

/// A count of tokens as SQLite keeps it; past `i64::MAX` (never reached at
/// any rate) it stays there.
fn stored(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn window_ms(renewal: Renewal) -> i64 {
    renewal.window.num_milliseconds().max(1)
}

pub(super) fn take_tokens_many(
    conn: &mut SqliteConnection,
    asks: &[RateRequest],
    now: DateTime<Utc>,
) -> Result<Vec<Option<RateGrant>>, StoreError> {
    let mut answers = Vec::with_capacity(asks.len());
    for ask in asks {
        let mut rows: Vec<BucketRow> = diesel::sql_query(
            "SELECT rate_tokens, rate_refilled_at, quota_remaining, quota_resets_at, \
             quota_limit, quota_window_ms, rate_granted FROM destinations WHERE id = ?",
        )
        .bind::<Text, _>(ask.destination.as_str())
        .load(conn)?;
        let Some(row) = rows.pop() else {
            answers.push(None);
            continue;
        };
        let (tokens, after) =
            bucket::take_tokens(row.bucket()?, ask.rate_per_second, ask.burst, ask.want, now);
        // The quota's columns as the take leaves them (a row without a
        // quota reads as none and is written back as none).
        diesel::sql_query(
            "UPDATE destinations SET rate_tokens = ?, rate_refilled_at = ?, \
             quota_remaining = ?, quota_resets_at = ?, quota_window_ms = ?, rate_granted = ? \
             WHERE id = ?",
        )
        .bind::<Nullable<Double>, _>(after.tokens)
        .bind::<Nullable<BigInt>, _>(after.refilled_at.map(micros))
        .bind::<Nullable<Double>, _>(after.quota.map(|q| q.remaining))
        .bind::<Nullable<BigInt>, _>(after.quota.map(|q| micros(q.resets_at)))
        .bind::<Nullable<BigInt>, _>(after.quota.and_then(|q| q.renews).map(window_ms))
        .bind::<BigInt, _>(stored(after.granted))
        .bind::<Text, _>(ask.destination.as_str())
        .execute(conn)?;
        answers.push(Some(tokens));
    }
    Ok(answers)
}

/// The columns an announcement is placed by.
#[derive(QueryableByName)]
struct Placed {
    #[diesel(sql_type = BigInt)]
    rate_granted: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    quota_token: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    quota_learned_at: Option<i64>,
}

pub(super) fn learn_quotas(
    conn: &mut SqliteConnection,
    notes: &[QuotaNote],
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    for note in quota::latest(notes) {
        let mut rows: Vec<Placed> = diesel::sql_query(
            "SELECT rate_granted, quota_token, quota_learned_at FROM destinations WHERE id = ?",
        )
        .bind::<Text, _>(note.destination.as_str())
        .load(conn)?;
        let Some(placed) = rows.pop() else {
            continue;
        };
        let stored_token = placed
            .quota_token
            .map(|t| count("destinations.quota_token", t))
            .transpose()?;
        let learned_at = placed
            .quota_learned_at
            .map(|at| super::rows::instant("destinations.quota_learned_at", at))
            .transpose()?;
        if !quota::supersedes(note, learned_at.map(|at| (stored_token, at))) {
            continue;
        }
        let granted = count("destinations.rate_granted", placed.rate_granted)?;
        let row = quota::learned(note, granted, stored_token, now);
        diesel::sql_query(
            "UPDATE destinations SET quota_remaining = ?, quota_resets_at = ?, quota_limit = ?, \
             quota_learned_at = ?, quota_token = ?, quota_window_ms = ? WHERE id = ?",
        )
        .bind::<Double, _>(row.pace.remaining)
        .bind::<BigInt, _>(micros(row.pace.resets_at))
        .bind::<Nullable<BigInt>, _>(row.limit.and_then(|l| i64::try_from(l).ok()))
        .bind::<BigInt, _>(micros(row.learned_at))
        .bind::<Nullable<BigInt>, _>(row.token.map(stored))
        .bind::<Nullable<BigInt>, _>(row.pace.renews.map(window_ms))
        .bind::<Text, _>(note.destination.as_str())
        .execute(conn)?;
    }
    Ok(())
}
