//! Where `remit run` serves the console: on the API's listener by
//! default, on `metrics.bind`'s with `console.listener = "metrics"`, and
//! nowhere when `console.enabled` is false.

use remit::domain::Region;
use remit_actors::config::ConsoleListener;

use super::browser::Browser;
use crate::support::{self, Backend, TestDb, API_TOKEN};

#[actix_rt::test]
async fn the_console_follows_its_listener_setting() {
    let db = TestDb::running_on(Backend::Postgres).await;

    let mut config = support::config(&db, Region::EU, "eu-1");
    config.metrics.bind = Some("127.0.0.1:0".into());
    config.console.listener = ConsoleListener::Metrics;
    let runtime = support::start(config, &db.store).await;
    let metrics = runtime.metrics_addr().unwrap();
    let on_metrics = Browser::new(metrics);
    assert_eq!(on_metrics.get("/console/sign-in").await.status, 200);
    let signed_in = Browser::signed_in(metrics, API_TOKEN).await;
    assert_eq!(signed_in.get("/console/overview").await.status, 200);
    let on_api = Browser::new(runtime.api_addr());
    assert_eq!(on_api.get("/console/sign-in").await.status, 404);
    runtime.shutdown().await;

    let mut config = support::config(&db, Region::EU, "eu-1");
    config.console.enabled = false;
    let runtime = support::start(config, &db.store).await;
    let on_api = Browser::new(runtime.api_addr());
    assert_eq!(on_api.get("/console/sign-in").await.status, 404);
    runtime.shutdown().await;

    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let on_api = Browser::new(runtime.api_addr());
    assert_eq!(on_api.get("/console/sign-in").await.status, 200);
    runtime.shutdown().await;
}
