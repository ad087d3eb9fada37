//! A receiver whose rate-limit fields are hostile (a negative remaining,
//! a reset centuries away) slows its destination for at most
//! `retry.max_server_delay_seconds` at a time, and nothing panics.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::{web, HttpResponse};
use parking_lot::Mutex;
use remit::domain::{Region, TaskState};

use crate::support::{self, receiver::serve, TestDb};

#[actix_rt::test]
async fn hostile_quota_fields_hold_a_destination_no_longer_than_the_cap() {
    let db = TestDb::with_database_clock().await;
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let seen = arrivals.clone();
    let (addr, server) = serve(move |app| {
        let seen = seen.clone();
        app.default_service(web::to(move || {
            seen.lock().push(Instant::now());
            async {
                HttpResponse::Ok()
                    .insert_header(("ratelimit", r#""default";r=-5;t=99999999999"#))
                    .insert_header(("ratelimit-policy", r#""default";q=-1;w=0"#))
                    .finish()
            }
        }));
    });
    let url = format!("http://{addr}/hook");
    let dest = support::destination(&db, "crm", Region::EU, &url, None).await;
    let mut tasks = Vec::new();
    for i in 0..4 {
        tasks.push(support::task(&db, &format!("r{i}"), &dest, Region::EU).await);
    }
    let mut config = support::config(&db, Region::EU, "eu-1");
    config.retry.max_server_delay_seconds = 1;
    config.throttle.default.rate_per_second = 1000.0;
    config.throttle.default.burst = 10;
    config.throttle.default.max_in_flight = 1;
    let runtime = support::start(config, &db.store).await;

    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(15)).await;
    let series = runtime.stats().metrics.encode();
    runtime.shutdown().await;
    drop(server.stop(false));

    // Read as nothing left until a reset one second away, the cap.
    let gauge = r#"remit_destination_quota_remaining{region="eu",destination="crm"} 0"#;
    assert!(series.contains(gauge), "{gauge} missing from:\n{series}");
    let arrivals = arrivals.lock().clone();
    assert_eq!(arrivals.len(), 4, "one request per task");
    let gaps: Vec<Duration> = arrivals.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.iter().all(|gap| *gap < Duration::from_millis(2_000)),
        "never held past the one-second cap (and a little slack): {gaps:?}"
    );
    assert!(
        gaps.iter().any(|gap| *gap >= Duration::from_millis(500)),
        "the announcement was obeyed: nothing was left until its reset: {gaps:?}"
    );
}
