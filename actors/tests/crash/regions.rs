//! Killing every consumer of a region never lets another region's
//! consumer take its work.

use remit::store::{Schedule, CRASH_EXIT_CODE};
use std::time::Duration;

use remit::domain::{Region, TaskState};
use remit_actors::runtime::failpoint;

use crate::consumer::Consumer;
use crate::support::{self, Receiver, TestDb};

#[actix_rt::test]
async fn a_dead_eu_region_waits_for_an_eu_consumer() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let eu = support::destination(&db, "eu-crm", Region::EU, &receiver.url("/eu"), None).await;
    let us = support::destination(&db, "us-crm", Region::US, &receiver.url("/us"), None).await;
    let eu_task = support::task(&db, "eu-1", &eu, Region::EU).await;

    let mut us_consumer = Consumer::start(&db, "us", "us-1", None);
    let mut eu_consumer = Consumer::start(
        &db,
        "eu",
        "eu-1",
        Some(&format!("{}=return(exit)", failpoint::AFTER_CLAIM)),
    );
    assert_eq!(
        eu_consumer.exited(Duration::from_secs(15)).await.code(),
        Some(CRASH_EXIT_CODE)
    );
    // The eu lease (2 s) expires; us work scheduled after that is delivered,
    // so the us consumer has been claiming while the eu row was free to take.
    let leased = db.store.task(eu_task).await.unwrap().unwrap();
    let expiry = leased.lease_expires_at.unwrap();
    let mut late = Vec::new();
    while chrono::Utc::now() < expiry + chrono::Duration::milliseconds(500) {
        late.push(support::task(&db, &format!("us-{}", late.len()), &us, Region::US).await);
        support::wait_for_state(&db, &late, TaskState::Delivered, Duration::from_secs(10)).await;
    }
    let task = db.store.task(eu_task).await.unwrap().unwrap();
    assert_eq!(
        task.state,
        TaskState::Leased,
        "still the dead eu consumer's lease"
    );
    assert!(receiver.requests_to("/eu").is_empty());
    assert_eq!(
        db.count("SELECT count(*) AS n FROM attempts a JOIN tasks t ON t.id = a.task_id WHERE t.region = 'eu' AND a.consumer_id LIKE 'us-%'")
            .await,
        0
    );

    // An eu consumer comes back and finishes it.
    let mut eu_again = Consumer::start(&db, "eu", "eu-2", None);
    support::wait_for_state(
        &db,
        &[eu_task],
        TaskState::Delivered,
        Duration::from_secs(15),
    )
    .await;
    assert_eq!(eu_again.stop().await.code(), Some(0));
    assert_eq!(us_consumer.stop().await.code(), Some(0));
}
