//! The claim and the finish write no index entry of `tasks`: PostgreSQL
//! updates the row in place (HOT), which the row's page shows; an ended
//! task leaves the queue (a delete, which writes no index entry either)
//! and enters the end log.

use diesel::sql_types::{BigInt, Bool, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use remit::domain::{AttemptRecord, Region};
use remit::policy::{Decision, Transition};
use remit::store::{Finish, Leases, TransitionOutcome};

use crate::support::TestDb;

#[derive(QueryableByName)]
struct Version {
    #[diesel(sql_type = BigInt)]
    page: i64,
    #[diesel(sql_type = BigInt)]
    item: i64,
}

#[derive(QueryableByName)]
struct HeapOnly {
    #[diesel(sql_type = Bool)]
    heap_only: bool,
}

#[derive(QueryableByName)]
struct Entries {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// pageinspect reads a page as it lies on disk and in the buffer cache: the
/// flag PostgreSQL sets on a row version that has no index entry of its own.
async fn heap_only(db: &TestDb, task: uuid::Uuid) -> bool {
    let mut conn = db.conn().await;
    // Another test may create the extension at the same moment; the loser's
    // error says it exists, and the next try sees it.
    for _ in 0..3 {
        let created = diesel::sql_query("CREATE EXTENSION IF NOT EXISTS pageinspect")
            .execute(&mut conn)
            .await;
        if created.is_ok() {
            break;
        }
    }
    let version: Version = diesel::sql_query(
        "SELECT (ctid::text::point)[0]::int8 AS page, (ctid::text::point)[1]::int8 AS item
         FROM tasks WHERE id = $1",
    )
    .bind::<diesel::sql_types::Uuid, _>(task)
    .get_result(&mut conn)
    .await
    .unwrap();
    let table: String = format!("{}.tasks", schema(&mut conn).await);
    let flags: HeapOnly = diesel::sql_query(
        "SELECT (t_infomask2 & 32768) <> 0 AS heap_only
         FROM heap_page_items(get_raw_page($1, $2::int)) WHERE lp = $3::int",
    )
    .bind::<Text, _>(table)
    .bind::<BigInt, _>(version.page)
    .bind::<BigInt, _>(version.item)
    .get_result(&mut conn)
    .await
    .unwrap();
    flags.heap_only
}

async fn schema(conn: &mut diesel_async::AsyncPgConnection) -> String {
    #[derive(QueryableByName)]
    struct Schema {
        #[diesel(sql_type = Text)]
        name: String,
    }
    diesel::sql_query("SELECT current_schema() AS name")
        .get_result::<Schema>(conn)
        .await
        .unwrap()
        .name
}

/// Entries in the index `name`, which is small enough for one page: its
/// root is then its only leaf, block 1. Dead rows keep their entries until
/// a vacuum, so the count only grows when an update writes new entries.
async fn index_entries(db: &TestDb, name: &str) -> i64 {
    let mut conn = db.conn().await;
    let index = format!("{}.{name}", schema(&mut conn).await);
    diesel::sql_query("SELECT count(*) AS n FROM bt_page_items($1, 1)")
        .bind::<Text, _>(index)
        .get_result::<Entries>(&mut conn)
        .await
        .unwrap()
        .n
}

#[tokio::test]
async fn a_claimed_row_is_updated_in_place_without_an_index_entry() {
    let db = TestDb::new().await;
    let hooks = db.destination("hooks", Region::US).await;
    let ids = [
        db.task("r-1", &hooks, Region::US).await,
        db.task("r-2", &hooks, Region::US).await,
    ];
    for id in ids {
        assert!(
            !heap_only(&db, id.0).await,
            "a new row has its index entries"
        );
    }
    assert_eq!(index_entries(&db, "task_queue_due").await, 2);
    assert_eq!(index_entries(&db, "tasks_pkey").await, 2);

    let claimed = db.claim(Region::US, "owner-1", 10).await;
    assert_eq!(claimed.len(), 2);
    for id in ids {
        assert!(
            heap_only(&db, id.0).await,
            "the claim's update of {id} was not HOT"
        );
    }
    assert_eq!(
        index_entries(&db, "task_queue_due").await,
        2,
        "the claim added entries"
    );
    assert_eq!(
        index_entries(&db, "tasks_pkey").await,
        2,
        "the claim added entries"
    );

    // Delivering ends the row in place too: no index of `tasks` names a
    // column the finish writes. The task's queue row is deleted (its entry
    // goes with the next vacuum) and one end row is appended.
    let lease = claimed[0].lease();
    let outcome = db
        .store
        .finish_many(&[Finish {
            lease,
            destination: hooks.clone(),
            decision: Decision {
                transition: Transition::Deliver,
                pause_destination_until: None,
                record: AttemptRecord {
                    http_status: Some(200),
                    ..AttemptRecord::default()
                },
            },
        }])
        .await
        .unwrap()
        .outcomes;
    assert_eq!(outcome, [TransitionOutcome::Applied]);
    assert!(
        heap_only(&db, claimed[0].task.id.0).await,
        "the finish's update was not HOT"
    );
    assert_eq!(index_entries(&db, "tasks_pkey").await, 2);
    assert_eq!(index_entries(&db, "task_queue_due").await, 2);
    assert_eq!(db.count("SELECT count(*) AS n FROM task_queue").await, 1);
    assert_eq!(
        db.count("SELECT count(*) AS n FROM task_ends").await,
        1,
        "the end was not logged"
    );
}
