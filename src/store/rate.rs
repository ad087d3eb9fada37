//! The shared token bucket of a destination: every process of the region
//! takes its tokens from the same row, so the configured rate holds across
//! all of them. Tokens refill continuously at `rate` per second up to
//! `burst`; the row lock serialises takers for the length of one UPDATE.
//! A taker that waited on the lock may carry an older `now` than the last
//! writer: time never runs backwards for the bucket, and nothing is granted
//! below zero.

use diesel::sql_types::{Double, Integer, Nullable, Text, Timestamptz};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::{PgStore, StoreError};
use crate::domain::DestinationId;

const TAKE_SQL: &str = r#"
WITH clock AS (SELECT coalesce($2, now()) AS now),
current AS (
    SELECT d.id,
           LEAST($4, coalesce(d.rate_tokens, $4)
                     + GREATEST(0, EXTRACT(EPOCH FROM clock.now - coalesce(d.rate_refilled_at, clock.now))) * $3)
               AS tokens,
           GREATEST(clock.now, coalesce(d.rate_refilled_at, clock.now)) AS refilled_at
    FROM destinations d, clock
    WHERE d.id = $1
    FOR NO KEY UPDATE OF d
),
taken AS (
    SELECT id, tokens, refilled_at, GREATEST(0, LEAST(floor(tokens), $5))::int AS granted
    FROM current
)
UPDATE destinations d
SET rate_tokens = taken.tokens - taken.granted,
    rate_refilled_at = taken.refilled_at
FROM taken, clock
WHERE d.id = taken.id
RETURNING taken.granted AS granted, taken.tokens - taken.granted AS remaining
"#;

#[derive(QueryableByName)]
struct Taken {
    #[diesel(sql_type = Integer)]
    granted: i32,
    #[diesel(sql_type = Double)]
    remaining: f64,
}

/// What a take returned: tokens granted now, or how long until one is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tokens {
    Granted(u32),
    WaitFor(std::time::Duration),
}

pub(super) async fn take_tokens(
    store: &PgStore,
    destination: &DestinationId,
    rate_per_second: f64,
    burst: u32,
    want: u32,
) -> Result<Tokens, StoreError> {
    let rate = rate_per_second.max(1e-3);
    let mut conn = store.conn().await?;
    // Tokens need no flush to disk before the answer: should the database
    // crash, the bucket's last moments are forgotten and it grants a few
    // tokens twice, while a send waiting on a flush per take would halve
    // what a destination can be sent.
    // (A transaction of diesel's, so a take dropped halfway never leaves
    // its connection inside an open transaction.)
    let taken: Option<Taken> = conn
        .transaction::<_, diesel::result::Error, _>(async |conn| {
            diesel::sql_query("SET LOCAL synchronous_commit = off")
                .execute(conn)
                .await?;
            diesel::sql_query(TAKE_SQL)
                .bind::<Text, _>(destination.as_str())
                .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
                .bind::<Double, _>(rate)
                .bind::<Double, _>(f64::from(burst.max(1)))
                .bind::<Integer, _>(i32::try_from(want.max(1)).unwrap_or(i32::MAX))
                .get_result(conn)
                .await
                .optional()
        })
        .await?;
    let taken = taken.ok_or_else(|| StoreError::NotFound {
        what: "destination",
        id: destination.to_string(),
    })?;
    if taken.granted > 0 {
        return Ok(Tokens::Granted(u32::try_from(taken.granted).unwrap_or(0)));
    }
    let missing = (1.0 - taken.remaining).max(0.0);
    Ok(Tokens::WaitFor(std::time::Duration::from_secs_f64(
        missing / rate,
    )))
}
