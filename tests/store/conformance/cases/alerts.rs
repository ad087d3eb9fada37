//! The alert check: failed tasks announced once each and coalesced per
//! destination and window, reminders late against their deadline (and not
//! those delivered in time), horizons about to run out, a destination's
//! failure streak announced at each level once and its recovery, nothing
//! announced twice by a second check, and nothing kept without an events
//! receiver. A destination's failing and recovery are
//! `destination_alerts.rs`.

use chrono::DateTime;
use remit::domain::{DestinationEvent, EventKind};
use remit::policy::{Decision, Transition};
use remit::store::{AlertCheck, Alerts, AlertsChecked, Changes, Finish, Leases, Schedule};
use serde_json::Value;

use super::*;

pub(super) fn check(announce: bool) -> AlertCheck {
    AlertCheck {
        region: Region::US,
        announce,
        late_after: Duration::minutes(10),
        horizon_warning: Duration::hours(1),
        window: Duration::minutes(5),
        failing_levels: vec![50, 90],
        sample: 2,
        batch: 100,
        quiet_prefix: "remit-events-".into(),
    }
}

/// Runs a check and takes the events it wrote out of the outbox.
pub(super) async fn checked<H: Harness>(
    h: &H,
    c: &AlertCheck,
) -> (AlertsChecked, Vec<DestinationEvent>) {
    let s = h.store();
    let done = s.check_alerts(c).await.unwrap();
    let events = s.destination_events(Region::US, 100).await.unwrap();
    let ids: Vec<_> = events.iter().map(|e| e.id).collect();
    s.forget_destination_events(&ids).await.unwrap();
    (done, events)
}

pub(super) fn data(e: &DestinationEvent) -> Value {
    serde_json::from_str(e.data.as_deref().expect("an alert carries its data")).unwrap()
}

/// Claims every due task of the region and ends each with `status`:
/// a 2xx delivers, anything else fails it for good.
pub(super) async fn answer_all<H: Harness>(h: &H, status: u16) -> usize {
    let claimed = h
        .store()
        .claim_due(&claim(Region::US, "c", 100))
        .await
        .unwrap();
    let batch: Vec<Finish> = claimed
        .iter()
        .map(|c| Finish {
            lease: c.lease(),
            destination: c.task.destination_id.clone(),
            decision: Decision {
                transition: match status {
                    200..=299 => Transition::Deliver,
                    _ => Transition::Fail(FailureReason::Status(status)),
                },
                pause_destination_until: None,
                record: record(status),
            },
        })
        .collect();
    let finished = h.store().finish_many(&batch).await.unwrap();
    assert!(finished
        .outcomes
        .iter()
        .all(|o| *o == TransitionOutcome::Applied));
    claimed.len()
}

pub(super) async fn task_at<H: Harness>(
    h: &H,
    reminder: &str,
    d: &DestinationId,
    not_before: DateTime<chrono::Utc>,
    horizon: Duration,
) -> TaskId {
    let mut new = crate::support::new_task(reminder, d, Region::US);
    new.not_before = not_before;
    new.retry_horizon = horizon;
    h.store().schedule(new).await.unwrap().task.id
}

pub async fn failed_tasks_are_announced_once_each_and_coalesced<H: Harness>(h: &H) {
    let crm = destination(h, "crm", Region::US).await;
    let billing = destination(h, "billing", Region::US).await;
    let elsewhere = destination(h, "eu-crm", Region::EU).await;
    for i in 0..3 {
        task(h, &format!("crm-{i}"), &crm, Region::US).await;
    }
    task(h, "billing-0", &billing, Region::US).await;
    task(h, "eu-0", &elsewhere, Region::EU).await;
    let c = check(true);
    let (done, events) = checked(h, &c).await;
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(done.failed, 0);

    h.clock().advance(Duration::minutes(1));
    assert_eq!(answer_all(h, 410).await, 4);
    let failed_at = h.clock().now_param().unwrap();
    let (done, events) = checked(h, &c).await;
    assert_eq!(done.failed, 4);
    assert_eq!(done.events, 2);
    let kinds: Vec<_> = events
        .iter()
        .map(|e| (e.kind, e.destination.as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (EventKind::TaskFailed, "billing"),
            (EventKind::TaskFailed, "crm")
        ]
    );
    let crm_event = &events[1];
    assert_eq!(crm_event.at, failed_at);
    let body = data(crm_event);
    assert_eq!(body["destination_id"], "crm");
    assert_eq!(body["region"], "us");
    assert_eq!(body["count"], 3);
    assert_eq!(body["reasons"], serde_json::json!({"http_410": 3}));
    let sample = body["sample"].as_array().unwrap();
    assert_eq!(sample.len(), 2, "the sample is bounded: {body}");
    assert_eq!(sample[0]["tenant_id"], "clinic-1");
    assert_eq!(sample[0]["reason"], "http_410");
    assert_eq!(sample[0]["attempts"], 1);
    assert!(sample[0]["reminder_id"]
        .as_str()
        .unwrap()
        .starts_with("crm-"));
    assert!(body.get("payload").is_none());

    // Announced once: a second check finds nothing.
    let (done, events) = checked(h, &c).await;
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(done.failed, 0);

    // More failures inside the window wait for it to pass, then go out
    // together, counted.
    for i in 3..6 {
        task(h, &format!("crm-{i}"), &crm, Region::US).await;
    }
    h.clock().advance(Duration::minutes(1));
    answer_all(h, 500).await;
    let (done, events) = checked(h, &c).await;
    assert_eq!(done.failed, 3);
    assert!(events.is_empty(), "held for the window: {events:?}");
    h.clock().advance(Duration::minutes(2));
    task(h, "crm-6", &crm, Region::US).await;
    answer_all(h, 500).await;
    assert!(checked(h, &c).await.1.is_empty());
    h.clock().advance(Duration::minutes(2));
    let (done, events) = checked(h, &c).await;
    assert_eq!(done.failed, 0, "nothing new found");
    assert_eq!(events.len(), 1, "{events:?}");
    let body = data(&events[0]);
    assert_eq!(body["count"], 4);
    assert_eq!(body["reasons"], serde_json::json!({"http_500": 4}));
    assert_eq!(
        body["since"],
        (failed_at + Duration::minutes(1)).to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
    );
    assert_ne!(events[0].id, crm_event.id);
    assert!(checked(h, &c).await.1.is_empty());
}

pub async fn without_a_receiver_failures_are_dropped<H: Harness>(h: &H) {
    let crm = destination(h, "crm", Region::US).await;
    task(h, "r1", &crm, Region::US).await;
    h.clock().advance(Duration::minutes(1));
    answer_all(h, 410).await;
    let (done, events) = checked(h, &check(false)).await;
    assert!(events.is_empty());
    assert_eq!(done.events, 0);
    let (done, events) = checked(h, &check(true)).await;
    assert!(events.is_empty(), "dropped, not held: {events:?}");
    assert_eq!(done.failed, 0);
}

pub async fn events_receivers_are_never_reported_on<H: Harness>(h: &H) {
    let own = destination(h, "remit-events-us-0123456789ab", Region::US).await;
    task(h, "event-1", &own, Region::US).await;
    task_at(h, "event-2", &own, t0(), Duration::minutes(30)).await;
    h.clock().advance(Duration::minutes(1));
    answer_all(h, 410).await;
    task(h, "event-3", &own, Region::US).await;
    h.clock().advance(Duration::hours(1));
    let (done, events) = checked(h, &check(true)).await;
    assert!(events.is_empty(), "{events:?}");
    assert_eq!((done.failed, done.late, done.horizon_ending), (0, 0, 0));
}

pub async fn late_reminders_are_announced_once_and_prompt_ones_never<H: Harness>(h: &H) {
    let crm = destination(h, "crm", Region::US).await;
    let c = check(true);
    // Due at t0; the clock stands at t0.
    let slow = task_at(h, "slow", &crm, t0(), Duration::days(3)).await;
    let prompt = task_at(h, "prompt", &crm, t0(), Duration::days(3)).await;
    task_at(
        h,
        "months-ahead",
        &crm,
        t0() + Duration::days(90),
        Duration::days(3),
    )
    .await;
    h.clock().advance(Duration::minutes(5));
    let (done, events) = checked(h, &c).await;
    assert!(events.is_empty(), "not late yet: {events:?}");
    assert_eq!(done.late, 0);

    // The prompt one is delivered inside its ten minutes.
    let claimed = h
        .store()
        .claim_due(&claim(Region::US, "c", 10))
        .await
        .unwrap();
    let prompt_claim = claimed.iter().find(|c| c.task.id == prompt).unwrap();
    h.store()
        .finish(
            &prompt_claim.lease(),
            &crm,
            &crate::support::delivered(record(200)),
        )
        .await
        .unwrap();

    h.clock().advance(Duration::minutes(6));
    let (done, events) = checked(h, &c).await;
    assert_eq!(done.late, 1);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].kind, EventKind::ReminderLate);
    let body = data(&events[0]);
    assert_eq!(body["count"], 1);
    assert_eq!(body["sample"][0]["task_id"], slow.to_string());
    assert_eq!(body["sample"][0]["reminder_id"], "slow");
    assert_eq!(body["sample"][0]["state"], "leased");
    assert_eq!(
        body["sample"][0]["late_at"],
        (t0() + Duration::minutes(10)).to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
    );

    // Looked at once: still late an hour on, not announced again.
    h.clock().advance(Duration::hours(1));
    let (done, events) = checked(h, &c).await;
    assert_eq!(done.late, 0);
    assert!(events.is_empty(), "{events:?}");

    // A task scheduled already late (its deadline past the last one looked
    // at) is announced at the next check.
    let now = h.clock().now_param().unwrap();
    task_at(
        h,
        "backdated",
        &crm,
        now - Duration::minutes(30),
        Duration::days(3),
    )
    .await;
    let (done, events) = checked(h, &c).await;
    assert_eq!(done.late, 1);
    assert_eq!(data(&events[0])["sample"][0]["reminder_id"], "backdated");
}

pub async fn horizons_about_to_end_are_announced_while_live<H: Harness>(h: &H) {
    let crm = destination(h, "crm", Region::US).await;
    let c = check(true);
    // The first check starts the horizon cursor at its now.
    assert!(checked(h, &c).await.1.is_empty());
    let now = h.clock().now_param().unwrap();
    // Due three days ago with a horizon of three days and half an hour.
    let ending = task_at(
        h,
        "ending",
        &crm,
        now - Duration::days(3),
        Duration::days(3) + Duration::minutes(30),
    )
    .await;
    let delivered = task_at(
        h,
        "delivered",
        &crm,
        now - Duration::days(3),
        Duration::days(3) + Duration::minutes(40),
    )
    .await;
    let later = task_at(
        h,
        "later",
        &crm,
        now - Duration::days(3),
        Duration::days(3) + Duration::hours(2),
    )
    .await;
    // Deliver "delivered" (and, being due, the others are claimed and
    // handed back by their lease running out; only state matters here).
    let claimed = h
        .store()
        .claim_due(&claim(Region::US, "c", 10))
        .await
        .unwrap();
    let d = claimed.iter().find(|c| c.task.id == delivered).unwrap();
    h.store()
        .finish(&d.lease(), &crm, &crate::support::delivered(record(200)))
        .await
        .unwrap();

    let (done, events) = checked(h, &c).await;
    assert_eq!(done.horizon_ending, 1);
    let ends: Vec<_> = events
        .iter()
        .filter(|e| e.kind == EventKind::HorizonEnding)
        .collect();
    assert_eq!(ends.len(), 1, "{events:?}");
    let body = data(ends[0]);
    assert_eq!(body["count"], 1);
    assert_eq!(body["sample"][0]["task_id"], ending.to_string());
    assert_eq!(body["horizon_warning_seconds"], 3600);
    assert!(checked(h, &c).await.1.is_empty(), "announced once");

    // An hour and a quarter on, "later" comes within the hour.
    h.clock().advance(Duration::minutes(75));
    let (done, events) = checked(h, &c).await;
    assert_eq!(done.horizon_ending, 1);
    let ends: Vec<_> = events
        .iter()
        .filter(|e| e.kind == EventKind::HorizonEnding)
        .collect();
    assert_eq!(data(ends[0])["sample"][0]["task_id"], later.to_string());
}

/// What enters behind what a check has already read is announced all the
/// same: a reminder scheduled with a deadline earlier than every one read,
/// a reminder moved to an earlier time, and a horizon shorter than one
/// already announced. A task moved after its announcement is announced
/// again for its new deadline; nothing is announced twice for one.
pub async fn what_enters_behind_the_checks_is_announced<H: Harness>(h: &H) {
    let crm = destination(h, "crm", Region::US).await;
    let c = check(true);
    let late_ids = |events: &[DestinationEvent]| -> Vec<String> {
        events
            .iter()
            .filter(|e| e.kind == EventKind::ReminderLate)
            .flat_map(|e| {
                data(e)["sample"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s["reminder_id"].as_str().unwrap().to_owned())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    task_at(h, "first", &crm, t0(), Duration::days(3)).await;
    h.clock().advance(Duration::minutes(11));
    let (done, events) = checked(h, &c).await;
    assert_eq!(
        (done.late, late_ids(&events)),
        (1, vec!["first".to_owned()])
    );

    // Scheduled already late, earlier than anything read: announced at the
    // next check (its window passed, the event goes out with the next).
    task_at(
        h,
        "backdated",
        &crm,
        t0() - Duration::hours(1),
        Duration::days(3),
    )
    .await;
    let (done, _) = checked(h, &c).await;
    assert_eq!(done.late, 1, "the backdated reminder");

    // Moved from next week to half an hour ago.
    let moved = task_at(
        h,
        "moved",
        &crm,
        t0() + Duration::days(7),
        Duration::days(3),
    )
    .await;
    let now = h.clock().now_param().unwrap();
    let to = |at| remit::store::Reschedule {
        not_before: at,
        payload: None,
        by: "tok_ops".into(),
        revive: false,
    };
    h.store()
        .reschedule(moved, &to(now - Duration::minutes(30)))
        .await
        .unwrap();
    let (done, _) = checked(h, &c).await;
    assert_eq!(done.late, 1, "the reminder moved earlier");
    let (done, _) = checked(h, &c).await;
    assert_eq!(done.late, 0, "each announced once");

    // Moved again, to another late deadline: announced for it.
    h.store()
        .reschedule(moved, &to(now - Duration::minutes(20)))
        .await
        .unwrap();
    let (done, _) = checked(h, &c).await;
    assert_eq!(done.late, 1, "announced again for its new deadline");

    // Horizons: one ending in 50 minutes is announced; then one scheduled
    // with a shorter horizon, ending in 20, is announced too.
    let now = h.clock().now_param().unwrap();
    task_at(h, "long", &crm, now + Duration::days(1), Duration::zero()).await;
    task_at(
        h,
        "ends-in-50",
        &crm,
        now - Duration::days(3),
        Duration::days(3) + Duration::minutes(50),
    )
    .await;
    let (done, _) = checked(h, &c).await;
    assert_eq!(done.horizon_ending, 1);
    task_at(
        h,
        "ends-in-20",
        &crm,
        now - Duration::days(3),
        Duration::days(3) + Duration::minutes(20),
    )
    .await;
    let (done, _) = checked(h, &c).await;
    assert_eq!(done.horizon_ending, 1, "the shorter horizon");
    let (done, _) = checked(h, &c).await;
    assert_eq!(done.horizon_ending, 0, "each announced once");
}
