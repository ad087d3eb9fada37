//! A destination's own rate, set through the API, is the rate it receives:
//! every pacing decision of the runtime (what the claimer leaves out, what
//! a throttle keeps and hands back, when the claimer looks again) reads the
//! destination's settings, not the configuration's default. Tried as a new
//! user would: the default stays at 20 a second and each destination has
//! only its rate set, to 1, to 2, and to 100,000 a second.
//!
//! The slow two receive at least 95% of their own rate once their burst is
//! spent, with no silence longer than two intervals; the fast one drains
//! far faster than the default would allow (before, the claimer held it as
//! if it were paced at the default, and it received 64 tasks every 2.3 s).

use remit::store::Schedule;
use std::time::Duration;

use chrono::{DateTime, Utc};
use remit::domain::{DestinationId, NewTask, Payload, Region, ReminderId, TaskId, TenantId};
use serde_json::json;

use crate::api::client::Api;
use crate::support::{self, Backend, Receiver, TestDb};

/// The configuration's default burst: spent at once, before the rate shows.
const BURST: usize = 20;
/// Requests measured at each slow rate after its burst.
const STEADY: usize = 16;
/// Tasks of the fast destination.
const FAST_TASKS: usize = 2_000;

#[actix_rt::test]
async fn each_destination_receives_its_own_rate_on_postgres() {
    each_destination_receives_its_own_rate(Backend::Postgres).await;
}

#[actix_rt::test]
async fn each_destination_receives_its_own_rate_on_sqlite() {
    each_destination_receives_its_own_rate(Backend::Sqlite).await;
}

async fn each_destination_receives_its_own_rate(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    let mut config = support::config(&db, Region::EU, "eu-1");
    // The shape a new user runs: the default lease, claim cadence and
    // limits; only the fast destination's share of a claim is raised.
    let defaults = remit_actors::config::Config::default();
    config.lease = defaults.lease;
    config.claim = defaults.claim;
    config.claim.per_destination_cap = 64;
    config.throttle = defaults.throttle;
    assert_eq!(config.throttle.default.rate_per_second, 20.0);
    assert_eq!(config.throttle.default.burst as usize, BURST);

    let rates = [("one", 1.0), ("two", 2.0), ("fast", 100_000.0)];
    let mut ids = Vec::new();
    for (name, _) in rates {
        let url = receiver.url(&format!("/{name}"));
        ids.push(support::destination(&db, name, Region::EU, &url, None).await);
    }
    let runtime = support::start(config, &db.store).await;
    let api = Api::new(&runtime);
    for (name, rate) in rates {
        let (status, view) = api
            .patch(
                &format!("/v1/destinations/{name}"),
                json!({ "rate_per_second": rate }),
            )
            .await;
        assert_eq!(status, 200, "{view}");
    }
    let mut tasks = Vec::new();
    tasks.extend(due_tasks(&db, &ids[0], BURST + STEADY).await);
    tasks.extend(due_tasks(&db, &ids[1], BURST + 2 * STEADY).await);
    let fast = due_tasks(&db, &ids[2], FAST_TASKS).await;
    tasks.extend(fast.iter().copied());

    support::wait_for_state(
        &db,
        &tasks,
        remit::domain::TaskState::Delivered,
        Duration::from_secs(60),
    )
    .await;
    runtime.shutdown().await;

    for (name, rate) in &rates[..2] {
        let times = arrivals(&receiver, name);
        // Past the burst, the bucket grants one token an interval.
        let steady = &times[BURST..];
        let interval = 1.0 / rate;
        let longest = steady
            .windows(2)
            .map(|w| seconds(w[1] - w[0]))
            .fold(0.0, f64::max);
        let span = seconds(steady[steady.len() - 1] - steady[0]);
        let got = (steady.len() - 1) as f64 / span;
        // Two intervals on a quiet machine; a loaded one (the whole suite
        // beside it, SQLite's one connection) may bunch a few sends after
        // a late claim, so up to 5 s passes: the fault this guards
        // against was a silence of 25 to 35 s.
        assert!(
            longest <= f64::max(2.0 * interval, 5.0),
            "{name}: a silence of {longest:.2} s at {rate}/s (gaps: {:?})",
            gaps(steady)
        );
        assert!(
            got >= 0.95 * rate,
            "{name}: {got:.2}/s of its own {rate}/s (gaps: {:?})",
            gaps(steady)
        );
    }
    let times = arrivals(&receiver, "fast");
    assert_eq!(times.len(), FAST_TASKS, "each fast task once");
    let span = seconds(times[FAST_TASKS - 1] - times[0]);
    // At the default 20 a second this would take 100 s; a third of that
    // leaves room for a loaded machine and still tells the two apart.
    assert!(
        span < 33.0,
        "{FAST_TASKS} tasks at 100,000/s took {span:.1} s"
    );
}

/// Schedules `n` tasks due a second ago, in batches.
async fn due_tasks(db: &TestDb, dest: &DestinationId, n: usize) -> Vec<TaskId> {
    let due = Utc::now() - chrono::Duration::seconds(1);
    let all: Vec<usize> = (0..n).collect();
    let mut ids = Vec::with_capacity(n);
    for chunk in all.chunks(500) {
        let batch = chunk
            .iter()
            .map(|i| NewTask {
                tenant_id: TenantId::new("clinic-1").unwrap(),
                reminder_id: ReminderId::new(&format!("{dest}-{i}")).unwrap(),
                destination_id: dest.clone(),
                region: Region::EU,
                not_before: due,
                retry_horizon: chrono::Duration::hours(1),
                payload: Payload::json(format!(r#"{{"i":{i}}}"#)),
                ordering_key: None,
                traceparent: None,
            })
            .collect();
        for answer in db.store.schedule_many(batch).await.unwrap() {
            ids.push(answer.unwrap().task.id);
        }
    }
    ids
}

fn arrivals(receiver: &Receiver, name: &str) -> Vec<DateTime<Utc>> {
    let mut times: Vec<_> = receiver
        .requests_to(&format!("/{name}"))
        .iter()
        .map(|r| r.at)
        .collect();
    times.sort();
    times
}

fn seconds(d: chrono::Duration) -> f64 {
    d.num_microseconds().unwrap_or(i64::MAX) as f64 / 1e6
}

fn gaps(times: &[DateTime<Utc>]) -> Vec<String> {
    times
        .windows(2)
        .map(|w| format!("{:.2}", seconds(w[1] - w[0])))
        .collect()
}
