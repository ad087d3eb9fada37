//! The primary is lost (`pg_ctl stop -m immediate`) while reminders are
//! scheduled through the API and delivered, and its streaming standby is
//! promoted; remit's URL names both hosts with
//! `target_session_attrs=read-write`.
//!
//! With a synchronous standby every promise holds: every task the API
//! acknowledged is delivered, none before its `not_before`, no retry
//! before its Retry-After, and delivery is back within seconds. With an
//! asynchronous one, what the primary committed after the standby last
//! heard from it is lost: schedules the API acknowledged are gone, and
//! deliveries whose mark was lost are sent again (the receiver's
//! idempotency key makes that safe). docs/operations.md ("PostgreSQL in
//! production") says which setup keeps which promise.

use remit::store::{Database, DatabaseConfig, Destinations, Schedule};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, SubsecRound, Utc};
use parking_lot::Mutex;
use remit::domain::{DestinationId, NewDestination, Region, Task, TaskId};
use serde_json::json;

use crate::api::client::Api;
use crate::support::cluster::{Cluster, Tls};
use crate::support::{self, Receiver, Reply, RetryAfter};

/// What the API acknowledged: each reminder's task and deadline.
#[derive(Default)]
struct Acknowledged {
    tasks: HashMap<String, (TaskId, DateTime<Utc>)>,
    refused: usize,
}

/// Schedules reminders through the API, one every 25 ms until `until`,
/// each due up to 1.5 s later, half of them to `paced`; records what was
/// acknowledged under names starting with `phase`.
async fn schedule_until(api: &Api, phase: &str, until: Instant, acked: &Mutex<Acknowledged>) {
    let mut n = 0u32;
    while Instant::now() < until {
        let reminder = format!("{phase}-{n}");
        let destination = if n % 2 == 0 { "crm" } else { "paced" };
        // To the microsecond, as the database keeps it.
        let not_before =
            (Utc::now() + chrono::Duration::milliseconds(i64::from(n % 6) * 250)).trunc_subsecs(6);
        let body = json!({
            "tenant_id": "clinic-1", "reminder_id": reminder, "destination_id": destination,
            "region": "eu", "not_before": not_before.to_rfc3339(),
            "payload": {"reminder": reminder},
        });
        let (status, answer) = api.post("/v1/tasks", body).await;
        if (200..300).contains(&status) {
            let id = TaskId(answer["id"].as_str().unwrap().parse().unwrap());
            acked.lock().tasks.insert(reminder, (id, not_before));
        } else {
            acked.lock().refused += 1;
        }
        n += 1;
        actix_rt::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The reminder a request delivered, from its body.
fn reminder_of(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    value["reminder"].as_str().map(str::to_owned)
}

/// The reminders delivered (answered 2xx), with how many times each.
fn delivered(receiver: &Receiver) -> HashMap<String, usize> {
    let mut seen = HashMap::new();
    for r in receiver.requests().iter().filter(|r| r.status == 200) {
        if let Some(reminder) = reminder_of(&r.body) {
            *seen.entry(reminder).or_default() += 1;
        }
    }
    seen
}

/// Waits until every reminder of `wanted` has been delivered.
async fn wait_for_all(receiver: &Receiver, wanted: &HashSet<String>, within: Duration) {
    let started = Instant::now();
    loop {
        let seen = delivered(receiver);
        let missing: Vec<&String> = wanted.iter().filter(|r| !seen.contains_key(*r)).collect();
        if missing.is_empty() {
            return;
        }
        assert!(
            started.elapsed() < within,
            "{} of {} acknowledged reminders not delivered after {within:?}, e.g. {:?}",
            missing.len(),
            wanted.len(),
            &missing[..missing.len().min(5)]
        );
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Task `id` as the promoted standby has it, read through `store`'s pool,
/// which the runtime does not share (delivery has a pool of its own): its
/// connections to the crashed primary each fail one statement and are
/// dropped, and a new one reaches the standby.
async fn task_after_failover(store: &Database, id: TaskId) -> Option<Task> {
    let mut failures = Vec::new();
    for _ in 0..16 {
        match store.task(id).await {
            Ok(task) => return task,
            Err(e) if e.is_transient() => failures.push(remit::error_chain(&e)),
            Err(e) => panic!("reading task {id}: {}", remit::error_chain(&e)),
        }
    }
    panic!("task {id} could not be read after the failover: {failures:?}")
}

/// A primary and its standby, migrated, with the destinations `crm` (always
/// 200) and `paced` (a 429 with `Retry-After: 1` for its first three
/// requests), and a runtime on the URL naming both.
async fn start(
    synchronous: bool,
) -> Option<(
    Cluster,
    Cluster,
    Database,
    Receiver,
    remit_actors::app::Runtime,
)> {
    let primary = Cluster::start(Tls::Off)?;
    let standby = primary.standby("standby1");
    if synchronous {
        primary.make_synchronous("standby1");
    }
    let url = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
        primary.port, standby.port
    );
    remit::store::migrate(&url).await.unwrap();
    let store = Database::connect(&DatabaseConfig::new(url.clone()), support::db::test_key())
        .await
        .unwrap();
    let receiver = Receiver::start();
    let limited = Reply::status(429).retry_after(RetryAfter::Seconds(1));
    receiver.script("/paced", vec![limited; 3], Reply::ok());
    for id in ["crm", "paced"] {
        let hook = receiver.url(&format!("/{id}"));
        let id = DestinationId::new(id).unwrap();
        store
            .add_destination(NewDestination::new(id, Region::EU, &hook, None).unwrap())
            .await
            .unwrap();
    }
    let runtime = support::start(support::config_for_url(&url, Region::EU, "eu-1"), &store).await;
    Some((primary, standby, store, receiver, runtime))
}

#[actix_rt::test]
async fn with_a_synchronous_standby_every_acknowledged_reminder_is_delivered_on_time() {
    let Some((primary, standby, _store, receiver, runtime)) = start(true).await else {
        return;
    };
    let api = Api::new(&runtime);
    let acked = Arc::new(Mutex::new(Acknowledged::default()));
    let started = Instant::now();
    // The primary is lost 1.5 s in and the standby promoted 0.3 s later,
    // while schedules keep coming for 4 s in all.
    let promoted_at = Arc::new(Mutex::new(None));
    let failover = {
        let promoted_at = promoted_at.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1_500));
            primary.crash();
            std::thread::sleep(Duration::from_millis(300));
            standby.promote();
            *promoted_at.lock() = Some(Utc::now());
            (primary, standby)
        })
    };
    schedule_until(&api, "sync", started + Duration::from_secs(4), &acked).await;
    let (_primary, _standby) = failover.join().unwrap();
    let promoted_at = promoted_at.lock().unwrap();

    let (tasks, refused) = {
        let acked = acked.lock();
        (acked.tasks.clone(), acked.refused)
    };
    assert!(tasks.len() > 20, "only {} acknowledged", tasks.len());
    let wanted: HashSet<String> = tasks.keys().cloned().collect();
    wait_for_all(&receiver, &wanted, Duration::from_secs(30)).await;

    let requests = receiver.requests();
    for r in &requests {
        let Some(reminder) = reminder_of(&r.body) else {
            continue;
        };
        if let Some((_, not_before)) = tasks.get(&reminder) {
            assert!(
                r.at >= *not_before,
                "{reminder} arrived {} before its not_before",
                *not_before - r.at
            );
        }
    }
    // Each retry after a 429 came no sooner than its Retry-After allowed.
    for limited in requests.iter().filter(|r| r.status == 429) {
        let key = limited.header("idempotency-key");
        let next = requests
            .iter()
            .filter(|r| r.header("idempotency-key") == key && r.at > limited.at)
            .map(|r| r.at)
            .min()
            .expect("the limited task was tried again");
        assert!(
            next - limited.at >= chrono::Duration::seconds(1),
            "a retry {} after its 429 asked for 1 s",
            next - limited.at
        );
    }
    let first_after = requests
        .iter()
        .filter(|r| r.status == 200 && r.at > promoted_at)
        .map(|r| r.at)
        .min()
        .expect("deliveries after the promotion");
    assert!(
        first_after - promoted_at < chrono::Duration::seconds(5),
        "delivery came back {} after the promotion",
        first_after - promoted_at
    );
    eprintln!(
        "synchronous: {} acknowledged ({refused} refused during the failover), all delivered; \
         the first delivery {} ms after the promotion",
        tasks.len(),
        (first_after - promoted_at).num_milliseconds()
    );
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn with_an_asynchronous_standby_what_it_never_received_is_lost() {
    let Some((primary, standby, store, receiver, runtime)) = start(false).await else {
        return;
    };
    let api = Api::new(&runtime);
    let acked = Arc::new(Mutex::new(Acknowledged::default()));
    // Replicated: scheduled while the standby streams.
    schedule_until(
        &api,
        "streamed",
        Instant::now() + Duration::from_secs(1),
        &acked,
    )
    .await;
    let streamed: HashSet<String> = acked.lock().tasks.keys().cloned().collect();
    // The standby falls behind (here: it stops), and the primary goes on
    // acknowledging schedules and marking deliveries only it has.
    standby.stop();
    schedule_until(
        &api,
        "unreplicated",
        Instant::now() + Duration::from_secs(1),
        &acked,
    )
    .await;
    let delivered_before = delivered(&receiver);
    primary.crash();
    standby.resume();
    standby.promote();
    schedule_until(
        &api,
        "promoted",
        Instant::now() + Duration::from_secs(1),
        &acked,
    )
    .await;

    let tasks = acked.lock().tasks.clone();
    let after: HashSet<String> = tasks
        .keys()
        .filter(|r| r.starts_with("promoted"))
        .cloned()
        .collect();
    let mut kept = streamed.clone();
    kept.extend(after.iter().cloned());
    wait_for_all(&receiver, &kept, Duration::from_secs(30)).await;

    let mut lost = Vec::new();
    for (reminder, (id, _)) in &tasks {
        if task_after_failover(&store, *id).await.is_none() {
            lost.push(reminder.clone());
        }
    }
    assert!(
        !lost.is_empty(),
        "an acknowledged schedule the standby never received is lost"
    );
    assert!(
        lost.iter().all(|r| r.starts_with("unreplicated")),
        "only what the standby never received is lost: {lost:?}"
    );
    let twice: Vec<String> = delivered(&receiver)
        .into_iter()
        .filter(|(r, n)| *n > 1 && delivered_before.contains_key(r))
        .map(|(r, _)| r)
        .collect();
    assert!(
        !twice.is_empty(),
        "a delivery whose mark was lost is sent again"
    );
    eprintln!(
        "asynchronous: {} acknowledged, {} lost (all acknowledged while the standby was away), \
         {} delivered twice after their marks were lost",
        tasks.len(),
        lost.len(),
        twice.len()
    );
    runtime.shutdown().await;
}
