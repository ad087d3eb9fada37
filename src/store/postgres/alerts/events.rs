//! The outbox of operational events: read a region's oldest, and delete
//! those that have been scheduled as webhooks. They are written by the
//! statements that disable or enable a destination (`finish_many`,
//! `destinations`) and by the alert check (`alerts`).

use chrono::{DateTime, Utc};
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamptz, Uuid};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::super::tables::rows::{corrupt, region};
use crate::domain::{DestinationEvent, DestinationId, EventKind, Region};
use crate::store::contract::StoreError;
use crate::store::postgres::store::PgStore;

#[derive(QueryableByName)]
struct EventRow {
    #[diesel(sql_type = Uuid)]
    id: uuid::Uuid,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Text)]
    destination_id: String,
    #[diesel(sql_type = Text)]
    region: String,
    #[diesel(sql_type = Nullable<Text>)]
    reason: Option<String>,
    #[diesel(sql_type = Timestamptz)]
    at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Text>)]
    last_error: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    data: Option<String>,
}

pub(in crate::store::postgres) async fn events(
    store: &PgStore,
    only: Region,
    limit: u32,
) -> Result<Vec<DestinationEvent>, StoreError> {
    let mut conn = store.conn().await?;
    let rows: Vec<EventRow> = diesel::sql_query(
        "SELECT id, kind, destination_id, region, reason, at, last_error, data \
         FROM destination_events WHERE region = $1 ORDER BY seq LIMIT $2",
    )
    .bind::<Text, _>(only.as_str())
    .bind::<BigInt, _>(i64::from(limit))
    .load(&mut conn)
    .await?;
    rows.into_iter()
        .map(|r| {
            Ok(DestinationEvent {
                id: r.id,
                kind: EventKind::parse(&r.kind)
                    .ok_or_else(|| corrupt("destination_events.kind", &r.kind))?,
                destination: DestinationId::new(&r.destination_id)
                    .map_err(|e| corrupt("destination_events.destination_id", e))?,
                region: region("destination_events.region", &r.region)?,
                reason: r.reason,
                at: r.at,
                last_error: r.last_error,
                data: r.data,
            })
        })
        .collect()
}

pub(in crate::store::postgres) async fn forget(
    store: &PgStore,
    ids: &[uuid::Uuid],
) -> Result<u64, StoreError> {
    let mut conn = store.conn().await?;
    let gone = diesel::sql_query("DELETE FROM destination_events WHERE id = ANY($1)")
        .bind::<Array<Uuid>, _>(ids)
        .execute(&mut conn)
        .await?;
    Ok(gone as u64)
}
