//! Destinations on SQLite: registration, the pause and the shared token
//! bucket, by the rules the other stores apply.

use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{BigInt, Double, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use super::rows::{destination_row, micros};
use super::secrets;
use crate::domain::{Destination, DestinationId, NewDestination, SendTarget};
use crate::payload_crypto::PayloadKey;
use crate::store::bucket::{self, Bucket};
use crate::store::lifecycle;
use crate::store::{rules, StoreError, TokenRequest, Tokens};

pub(super) fn add(
    conn: &mut SqliteConnection,
    key: &PayloadKey,
    new: NewDestination,
    now: DateTime<Utc>,
) -> Result<Destination, StoreError> {
    if let Some(existing) = destination_row(conn, &new.id)? {
        let valid = secrets::valid_values(conn, key, &new.id, now)?;
        return rules::same_destination_or_conflict(existing.destination()?, &valid, &new);
    }
    diesel::sql_query(
        "INSERT INTO destinations (id, region, url, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?)",
    )
    .bind::<Text, _>(new.id.as_str())
    .bind::<Text, _>(new.region.as_str())
    .bind::<Text, _>(new.url.as_str())
    .bind::<BigInt, _>(micros(now))
    .bind::<BigInt, _>(micros(now))
    .execute(conn)?;
    if let Some(secret) = &new.signing_secret {
        secrets::insert(conn, key, &new.id, secret, now)?;
    }
    Ok(Destination {
        id: new.id,
        region: new.region,
        url: new.url,
        has_signing_secret: new.signing_secret.is_some(),
        enabled: true,
        paused_until: None,
    })
}

pub(super) fn send_target(
    conn: &mut SqliteConnection,
    key: &PayloadKey,
    id: &DestinationId,
    now: DateTime<Utc>,
) -> Result<Option<SendTarget>, StoreError> {
    let Some(row) = destination_row(conn, id)? else {
        return Ok(None);
    };
    let destination = row.destination()?;
    let pause_left = destination
        .paused_until
        .map(|until| until - now)
        .filter(|left| *left > Duration::zero());
    Ok(Some(SendTarget {
        destination,
        signing_secrets: secrets::valid(conn, key, id, now)?,
        pause_left,
    }))
}

pub(super) fn pause(
    conn: &mut SqliteConnection,
    id: &DestinationId,
    pause: Duration,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, StoreError> {
    let row = destination_row(conn, id)?.ok_or_else(|| StoreError::NotFound {
        what: "destination",
        id: id.to_string(),
    })?;
    let until = lifecycle::pause(row.destination()?.paused_until, pause, now);
    diesel::sql_query("UPDATE destinations SET paused_until = ?, updated_at = ? WHERE id = ?")
        .bind::<BigInt, _>(micros(until))
        .bind::<BigInt, _>(micros(now))
        .bind::<Text, _>(id.as_str())
        .execute(conn)?;
    Ok(until)
}

pub(super) fn take_tokens_many(
    conn: &mut SqliteConnection,
    asks: &[TokenRequest],
    now: DateTime<Utc>,
) -> Result<Vec<Option<Tokens>>, StoreError> {
    let mut answers = Vec::with_capacity(asks.len());
    for ask in asks {
        let Some(row) = destination_row(conn, &ask.destination)? else {
            answers.push(None);
            continue;
        };
        let bucket = Bucket {
            tokens: row.rate_tokens,
            refilled_at: row.refilled_at()?,
        };
        let (tokens, after) =
            bucket::take_tokens(bucket, ask.rate_per_second, ask.burst, ask.want, now);
        diesel::sql_query(
            "UPDATE destinations SET rate_tokens = ?, rate_refilled_at = ? WHERE id = ?",
        )
        .bind::<Nullable<Double>, _>(after.tokens)
        .bind::<Nullable<BigInt>, _>(after.refilled_at.map(micros))
        .bind::<Text, _>(ask.destination.as_str())
        .execute(conn)?;
        answers.push(Some(tokens));
    }
    Ok(answers)
}
