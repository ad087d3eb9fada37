//! Actors that fail are restarted by their supervisor and nothing is lost.
//! Failpoints are global to the process, so the scenarios run in sequence
//! in one test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use remit_testkit::runtime as support;

use remit::store::Schedule;
use std::time::Duration;

use remit::domain::{AttemptOutcome, Region, TaskState};
use remit_actors::runtime::failpoint;

use support::{Receiver, TestDb};

#[actix_rt::test]
async fn failed_actors_are_restarted_and_every_task_is_delivered() {
    let _scenario = fail::FailScenario::setup();
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "crm", Region::US, &receiver.url("/hook"), None).await;
    let mut config = support::config(&db, Region::US, "us-1");
    config.lease.seconds = 2;
    config.send.timeout_ms = 1_000;
    config.send.senders = 1;
    let runtime = support::start(config, &db.store).await;

    // 1. The sender dies after the receiver answered, before the finish.
    fail::cfg(failpoint::AFTER_RESPONSE, "1*return").unwrap();
    let first = support::task(&db, "mid-send", &dest, Region::US).await;
    support::wait_for_state(&db, &[first], TaskState::Delivered, Duration::from_secs(10)).await;
    let requests = receiver.requests_to("/hook");
    assert_eq!(requests.len(), 2, "the lost answer is sent again");
    assert_eq!(
        requests[0].header("idempotency-key"),
        requests[1].header("idempotency-key")
    );
    let log = db.store.attempts(first).await.unwrap();
    assert_eq!(
        log.iter().map(|a| a.outcome).collect::<Vec<_>>(),
        [AttemptOutcome::Abandoned, AttemptOutcome::Delivered],
        "the attempt log tells the story"
    );
    assert!(remit_actors::runtime::RuntimeStats::read(&runtime.stats().restarts) >= 1);

    // 2. The claimer dies right after a claim commits: the tasks stay
    //    leased, and the restarted claimer takes them back once the lease
    //    expires.
    fail::cfg(failpoint::AFTER_CLAIM, "1*return").unwrap();
    let mut tasks = Vec::new();
    for i in 0..3 {
        tasks.push(support::task(&db, &format!("after-claim-{i}"), &dest, Region::US).await);
    }
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(15)).await;
    let reclaimed = db
        .count("SELECT count(*) AS n FROM attempts WHERE outcome = 'abandoned' AND consumer_id = 'us-1'")
        .await;
    // One abandoned attempt from the first scenario, at least one more here.
    assert!(
        reclaimed >= 2,
        "the first claim's leases expired and were reclaimed"
    );
    assert_eq!(
        receiver.requests_to("/hook").len(),
        5,
        "each claimed task sent once"
    );

    fail::remove(failpoint::AFTER_RESPONSE);
    fail::remove(failpoint::AFTER_CLAIM);

    // 3. A panic in each actor in turn becomes a restart: the tasks are
    //    delivered and every place in memory comes back.
    let restarts = |r: &remit_actors::app::Runtime| {
        remit_actors::runtime::RuntimeStats::read(&r.stats().restarts)
    };
    for (round, point) in [
        failpoint::AFTER_CLAIM,
        failpoint::THROTTLE_PUMP,
        failpoint::AFTER_RESPONSE,
    ]
    .into_iter()
    .enumerate()
    {
        let before = restarts(&runtime);
        fail::cfg(point, "1*panic").unwrap();
        let mut tasks = Vec::new();
        for i in 0..2 {
            let reminder = format!("panic-{round}-{i}");
            tasks.push(support::task(&db, &reminder, &dest, Region::US).await);
        }
        support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(15)).await;
        fail::remove(point);
        assert!(
            restarts(&runtime) > before,
            "{point}: the panicking actor was restarted"
        );
        wait_until_nothing_is_held(&runtime).await;
    }
    runtime.shutdown().await;

    // 4. The reconciler too (it runs every second here).
    let mut config = support::config(&db, Region::US, "us-2");
    config.reconcile.interval_seconds = 1;
    fail::cfg(failpoint::RECONCILE, "1*panic").unwrap();
    let runtime = support::start(config, &db.store).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while restarts(&runtime) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the reconciler was not restarted"
        );
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
    fail::remove(failpoint::RECONCILE);
    runtime.shutdown().await;

    // 5. A claimer that fails every time is a region that cannot make
    //    progress: /readyz says so, and says ready again once it recovers.
    fail::cfg(failpoint::AFTER_CLAIM, "return").unwrap();
    // Each failed claim leaves its lease to expire before the task can be
    // claimed (and the claimer fail) again: a one-second lease.
    let looping = support::task(&db, "looping", &dest, Region::US).await;
    let mut config = support::config(&db, Region::US, "us-3");
    config.lease.seconds = 1;
    config.send.timeout_ms = 400;
    let runtime = support::start(config, &db.store).await;
    let readyz = format!("http://{}/readyz", runtime.api_addr());
    let client = awc::Client::default();
    let ready = |want: u16| {
        let (client, readyz) = (client.clone(), readyz.clone());
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            loop {
                let mut response = client.get(&readyz).send().await.unwrap();
                if response.status().as_u16() == want {
                    return response.body().await.unwrap();
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "/readyz never answered {want}"
                );
                actix_rt::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    let body = ready(503).await;
    let body = String::from_utf8_lossy(&body);
    assert!(body.contains("claimer is restart-looping"), "{body}");
    fail::remove(failpoint::AFTER_CLAIM);
    support::wait_for_state(
        &db,
        &[looping],
        TaskState::Delivered,
        Duration::from_secs(15),
    )
    .await;
    ready(200).await;
    runtime.shutdown().await;
}

async fn wait_until_nothing_is_held(runtime: &remit_actors::app::Runtime) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while runtime.held() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "{} capacity slots still held",
            runtime.held()
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}
