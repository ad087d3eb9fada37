//! The server's replication, for `remit status` (see
//! `store::Replication`): its settings and the standbys streaming from it.

use chrono::{DateTime, Utc};
use diesel::sql_types::{Bool, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use crate::store::contract::{ReadSource, Replication, Standby, StoreError};
use crate::store::postgres::store::PgStore;

#[derive(QueryableByName)]
struct Source {
    #[diesel(sql_type = Timestamptz)]
    now: DateTime<Utc>,
    #[diesel(sql_type = Bool)]
    standby: bool,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    replayed_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Bool)]
    caught_up: bool,
    #[diesel(sql_type = Bool)]
    paused: bool,
}

#[derive(QueryableByName)]
struct Settings {
    #[diesel(sql_type = Text)]
    names: String,
    #[diesel(sql_type = Text)]
    commit: String,
    #[diesel(sql_type = Bool)]
    in_recovery: bool,
}

#[derive(QueryableByName)]
struct StandbyRow {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Nullable<Text>)]
    state: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    sync_state: Option<String>,
}

/// Whether this store's server is a replica, and how far its replay
/// is behind (`store::ReadSource`). `pg_is_wal_replay_paused()` fails
/// on a primary, hence the CASEs.
pub(super) async fn read_source(store: &PgStore) -> Result<ReadSource, StoreError> {
    let mut conn = store.conn().await?;
    let s: Source = diesel::sql_query(
        "SELECT clock_timestamp() AS now, pg_is_in_recovery() AS standby, \
         pg_last_xact_replay_timestamp() AS replayed_at, \
         CASE WHEN pg_is_in_recovery() \
              THEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() \
              ELSE true END AS caught_up, \
         CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END \
             AS paused",
    )
    .get_result(&mut conn)
    .await?;
    Ok(ReadSource {
        now: s.now,
        standby: s.standby,
        replayed_at: s.replayed_at,
        caught_up: s.caught_up,
        paused: s.paused,
    })
}

/// The server's replication settings and standbys. A role without
/// `pg_monitor` sees the standbys' names but not their states.
pub(super) async fn replication(store: &PgStore) -> Result<Replication, StoreError> {
    let mut conn = store.conn().await?;
    let settings: Settings = diesel::sql_query(
        "SELECT current_setting('synchronous_standby_names') AS names, \
         current_setting('synchronous_commit') AS commit, \
         pg_is_in_recovery() AS in_recovery",
    )
    .get_result(&mut conn)
    .await?;
    let standbys: Vec<StandbyRow> = diesel::sql_query(
        "SELECT application_name AS name, state, sync_state FROM pg_stat_replication \
         ORDER BY application_name",
    )
    .load(&mut conn)
    .await?;
    Ok(Replication {
        synchronous_standby_names: settings.names,
        synchronous_commit: settings.commit,
        in_recovery: settings.in_recovery,
        standbys: standbys
            .into_iter()
            .map(|s| Standby {
                name: s.name,
                state: s.state,
                sync_state: s.sync_state,
            })
            .collect(),
    })
}
