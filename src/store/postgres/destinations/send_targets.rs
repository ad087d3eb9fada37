//! Destinations read for their sends, many in one statement (and their
//! valid secrets in a second, their headers in a third): a process
//! sending to thousands of destinations, a task or two each, reads their
//! rows in batches rather than one round trip per destination (one read is
//! a batch of one).

use std::collections::HashMap;

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Timestamptz};
use diesel_async::RunQueryDsl;

use super::super::tables::rows::DestinationRow;
use super::super::tables::schema::destinations;
use super::{headers, secrets};
use crate::domain::{DestinationId, SendTarget};
use crate::store::contract::StoreError;
use crate::store::postgres::store::PgStore;

/// Each destination with its secret and what is left of its pause by the
/// store's clock (not the caller's), in the order asked (an id may come
/// twice), `None` for one that does not exist.
pub(in crate::store::postgres) async fn send_targets(
    store: &PgStore,
    ids: &[DestinationId],
) -> Result<Vec<Option<SendTarget>>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut conn = store.conn().await?;
    let pause_left_ms =
        diesel::dsl::sql::<Nullable<BigInt>>("(EXTRACT(EPOCH FROM paused_until - coalesce(")
            .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
            .sql(", now())) * 1000)::bigint");
    let wanted: Vec<&str> = ids.iter().map(DestinationId::as_str).collect();
    let rows: Vec<(DestinationRow, Option<i64>)> = destinations::table
        .filter(destinations::id.eq_any(&wanted))
        .filter(destinations::deleted_at.is_null())
        .select((DestinationRow::as_select(), pause_left_ms))
        .load(&mut conn)
        .await?;
    let mut secrets =
        secrets::valid(&mut conn, &store.key, &wanted, store.clock.now_param()).await?;
    let mut headers = headers::records(&mut conn, &wanted).await?;
    let mut found = HashMap::with_capacity(rows.len());
    for (row, pause_left_ms) in rows {
        let signing_secrets = secrets.remove(&row.id).unwrap_or_default();
        let opened = headers
            .remove(&row.id)
            .unwrap_or_default()
            .iter()
            .map(|r| r.opened(&store.key, &row.id))
            .collect::<Result<Vec<_>, _>>()?;
        let mut destination: crate::domain::Destination = row.try_into()?;
        destination.settings.headers = opened;
        let target = SendTarget {
            destination,
            signing_secrets,
            pause_left: pause_left_ms
                .filter(|ms| *ms > 0)
                .map(chrono::Duration::milliseconds),
        };
        found.insert(target.destination.id.clone(), target);
    }
    Ok(ids.iter().map(|id| found.get(id).cloned()).collect())
}
