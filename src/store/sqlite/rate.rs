//! A destination's shared token bucket on SQLite, paced by the quota its
//! receiver announced, and the announcements themselves: the rules of
//! `store::bucket` and `store::quota`, applied to the row inside the
//! write transaction.

use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Double, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use super::rows::{maybe, micros};
use crate::store::bucket::{self, Bucket, Learned};
use crate::store::{quota, QuotaNote, StoreError, TokenRequest, Tokens};

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
}

impl BucketRow {
    fn bucket(&self) -> Result<Bucket, StoreError> {
        let resets_at = maybe("destinations.quota_resets_at", self.quota_resets_at)?;
        Ok(Bucket {
            tokens: self.rate_tokens,
            refilled_at: maybe("destinations.rate_refilled_at", self.rate_refilled_at)?,
            quota: self
                .quota_remaining
                .zip(resets_at)
                .map(|(remaining, resets_at)| Learned {
                    remaining,
                    resets_at,
                }),
        })
    }
}

pub(super) fn take_tokens_many(
    conn: &mut SqliteConnection,
    asks: &[TokenRequest],
    now: DateTime<Utc>,
) -> Result<Vec<Option<Tokens>>, StoreError> {
    let mut answers = Vec::with_capacity(asks.len());
    for ask in asks {
        let mut rows: Vec<BucketRow> = diesel::sql_query(
            "SELECT rate_tokens, rate_refilled_at, quota_remaining, quota_resets_at \
             FROM destinations WHERE id = ?",
        )
        .bind::<Text, _>(ask.destination.as_str())
        .load(conn)?;
        let Some(row) = rows.pop() else {
            answers.push(None);
            continue;
        };
        let (tokens, after) =
            bucket::take_tokens(row.bucket()?, ask.rate_per_second, ask.burst, ask.want, now);
        diesel::sql_query(
            "UPDATE destinations SET rate_tokens = ?, rate_refilled_at = ?, \
             quota_remaining = coalesce(?, quota_remaining) WHERE id = ?",
        )
        .bind::<Nullable<Double>, _>(after.tokens)
        .bind::<Nullable<BigInt>, _>(after.refilled_at.map(micros))
        .bind::<Nullable<Double>, _>(after.quota.map(|q| q.remaining))
        .bind::<Text, _>(ask.destination.as_str())
        .execute(conn)?;
        answers.push(Some(tokens));
    }
    Ok(answers)
}

pub(super) fn learn_quotas(
    conn: &mut SqliteConnection,
    notes: &[QuotaNote],
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    for note in quota::latest(notes) {
        let row = quota::learned(note, now);
        diesel::sql_query(
            "UPDATE destinations SET quota_remaining = ?, quota_resets_at = ?, quota_limit = ?, \
             quota_learned_at = ? WHERE id = ?",
        )
        .bind::<Double, _>(row.pace.remaining)
        .bind::<BigInt, _>(micros(row.pace.resets_at))
        .bind::<Nullable<BigInt>, _>(row.limit.and_then(|l| i64::try_from(l).ok()))
        .bind::<BigInt, _>(micros(row.learned_at))
        .bind::<Text, _>(note.destination.as_str())
        .execute(conn)?;
    }
    Ok(())
}
