//! When a claim of a region could next find work, on SQLite: per enabled
//! destination of the region, its earliest unleased row (through
//! `tasks_due`) and its earliest lease to run out (through
//! `tasks_expired_leases`), each no earlier than the row's deadline and the
//! destination's pause.

use chrono::Duration;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use super::rows::micros;
use super::Ctx;
use crate::domain::Region;
use crate::store::StoreError;

#[derive(diesel::QueryableByName)]
struct Earliest {
    #[diesel(sql_type = Nullable<BigInt>)]
    at: Option<i64>,
}

pub(super) fn next_due(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    region: Region,
) -> Result<Option<Duration>, StoreError> {
    // An unleased row's `available_at` is never before its `not_before` (a
    // CHECK); a lease may end before it, so the later of the two counts.
    let earliest: Earliest = diesel::sql_query(
        "SELECT min(max(coalesce(paused_until, 0), due)) AS at FROM ( \
           SELECT d.paused_until, \
                  min(coalesce((SELECT min(t.available_at) FROM tasks t \
                                WHERE t.destination_id = d.id AND t.region = d.region \
                                  AND t.state IN ('pending', 'retry_wait')), \
                               9223372036854775807), \
                      coalesce((SELECT min(max(t.lease_expires_at, t.not_before)) FROM tasks t \
                                WHERE t.destination_id = d.id AND t.region = d.region \
                                  AND t.state = 'leased'), \
                               9223372036854775807)) AS due \
           FROM destinations d WHERE d.region = ? AND d.enabled = 1) \
         WHERE due < 9223372036854775807",
    )
    .bind::<Text, _>(region.as_str())
    .get_result(conn)?;
    Ok(earliest
        .at
        .map(|at| Duration::microseconds(at - micros(ctx.now)).max(Duration::zero())))
}
