//! Behind PgBouncer no server or role setting is needed: the settings
//! remit plans with reach its statements through a session pooler and a
//! transaction pooler alike, and no other client of the pooler.

use std::time::Duration;

use remit::domain::Region;
use remit::store::{Leases, Pooler};

use crate::behind_pgbouncer::{behind, connect, hook_with_tasks};
use crate::pgbouncer::PgBouncer;

/// Behind a pooler no role or server setting is needed: through a session
/// pooler remit sets what it would have asked for at connect once the
/// connection is open; through a transaction pooler it runs each statement
/// in a transaction of its own that sets them first (`SET LOCAL`), so they
/// end with it and another client of the same server never sees them. A
/// stock server's settings stand here: the test database sets none.
#[tokio::test]
async fn behind_a_pooler_remit_needs_no_setting_of_the_server() {
    use diesel_async::RunQueryDsl as _;
    #[derive(diesel::QueryableByName, Debug, PartialEq)]
    struct Planner {
        #[diesel(sql_type = diesel::sql_types::Text)]
        seqscan: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        jit: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        plans: String,
    }
    const READ: &str = "SELECT current_setting('enable_seqscan') AS seqscan, \
         current_setting('jit') AS jit, current_setting('plan_cache_mode') AS plans";
    let planner = |seqscan: &str, jit: &str, plans: &str| Planner {
        seqscan: seqscan.into(),
        jit: jit.into(),
        plans: plans.into(),
    };
    for mode in ["session", "transaction"] {
        let Some(bouncer) = PgBouncer::start_in(mode, 2, "").await else {
            return;
        };
        let pooler = match mode {
            "session" => Pooler::Session,
            _ => Pooler::Transaction,
        };
        let connector =
            remit::store::PgConnector::behind(&bouncer.url, Duration::from_secs(5), pooler)
                .unwrap()
                .for_store()
                .with_generic_plans();
        let mut conn = connector
            .establish()
            .await
            .unwrap_or_else(|e| panic!("{}\n{}", remit::error_chain(&e), bouncer.log()));
        let read: Planner = diesel::sql_query(READ).get_result(&mut conn).await.unwrap();
        assert_eq!(
            read,
            planner("off", "off", "force_generic_plan"),
            "through a {mode} pooler"
        );
        // Another client of the same pooler, whose statements land on the
        // same two server connections, finds the server's own settings:
        // nothing remit set outlived its session or its transaction.
        drop(conn);
        let (other, connection) = tokio_postgres::connect(&bouncer.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        for _ in 0..4 {
            let rows = other
                .simple_query("SELECT current_setting('enable_seqscan'), current_setting('jit')")
                .await
                .unwrap();
            let row = rows
                .iter()
                .find_map(|message| match message {
                    tokio_postgres::SimpleQueryMessage::Row(row) => Some(row),
                    _ => None,
                })
                .expect("a row");
            assert_eq!(
                (row.get(0), row.get(1)),
                (Some("on"), Some("on")),
                "another client of the {mode} pooler"
            );
        }
        // And a store starts there, its claims planned on those settings.
        remit::store::migrate(&bouncer.direct_url).await.unwrap();
        let mut config = behind(&bouncer, true);
        config.pooler = pooler;
        let store = connect(&bouncer, &config).await;
        let hook = hook_with_tasks(&store, 3).await;
        let claimed = store
            .claim_due(&remit_testkit::db::claim(Region::EU, "w", 10))
            .await
            .unwrap();
        assert_eq!(claimed.len(), 3, "through a {mode} pooler");
        assert!(claimed.iter().all(|c| c.task.destination_id == hook));
    }
}
