//! When a claim of a region could next find work, on SQLite: per enabled
//! destination of the region, its unleased rows' earliest `available_at`
//! and earliest after now less `JUST_MISSED` (through `tasks_due`) and its
//! earliest lease end after that (through `tasks_expired_leases`), combined by
//! `store::rules::next_due`. A row whose change waits for its attempt is
//! never claimed, so it never counts.

use chrono::Duration;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use super::rows::{instant, micros};
use super::store::Ctx;
use crate::domain::Region;
use crate::store::contract::StoreError;
use crate::store::rules::next_due::{self, Upcoming};

#[derive(diesel::QueryableByName)]
struct Row {
    #[diesel(sql_type = Nullable<BigInt>)]
    paused_until: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    first_unleased: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    next_unleased: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    next_lease_end: Option<i64>,
}

pub(super) fn next_due(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    region: Region,
) -> Result<Option<Duration>, StoreError> {
    let since = micros(ctx.now - next_due::JUST_MISSED);
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT d.paused_until, \
           (SELECT min(t.available_at) FROM tasks t \
            WHERE t.destination_id = d.id AND t.region = d.region \
              AND t.state IN ('pending', 'retry_wait') AND t.waiting_change IS NULL) \
              AS first_unleased, \
           (SELECT min(t.available_at) FROM tasks t \
            WHERE t.destination_id = d.id AND t.region = d.region \
              AND t.state IN ('pending', 'retry_wait') AND t.waiting_change IS NULL \
              AND t.available_at > ?) AS next_unleased, \
           (SELECT min(max(t.lease_expires_at, t.not_before)) FROM tasks t \
            WHERE t.destination_id = d.id AND t.region = d.region AND t.state = 'leased' \
              AND t.waiting_change IS NULL \
              AND max(t.lease_expires_at, t.not_before) > ?) AS next_lease_end \
         FROM destinations d WHERE d.region = ? AND d.enabled = 1",
    )
    .bind::<BigInt, _>(since)
    .bind::<BigInt, _>(since)
    .bind::<Text, _>(region.as_str())
    .load(conn)?;
    let at = |column, micros: Option<i64>| micros.map(|m| instant(column, m)).transpose();
    let mut earliest = None;
    for row in rows {
        let upcoming = Upcoming {
            paused_until: at("destinations.paused_until", row.paused_until)?,
            first_unleased: at("tasks.available_at", row.first_unleased)?,
            next_unleased: at("tasks.available_at", row.next_unleased)?,
            next_lease_end: at("tasks.lease_expires_at", row.next_lease_end)?,
        };
        if let Some(next) = next_due::earliest(ctx.now, upcoming) {
            earliest = Some(earliest.map_or(next, |e: chrono::DateTime<chrono::Utc>| e.min(next)));
        }
    }
    Ok(earliest.map(|at| (at - ctx.now).max(Duration::zero())))
}
