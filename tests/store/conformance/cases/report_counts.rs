//! `Reports`: each destination's counts and learned quota, and the last
//! hour minute by minute.

use remit::store::{Changes, Leases, Rates, Reports, Schedule};

use super::*;

pub async fn destination_summaries_count_each_destinations_tasks<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let idle = destination(h, "idle", Region::EU).await;
    destination(h, "us-crm", Region::US).await;
    let mut tasks = Vec::new();
    for n in 0..6 {
        tasks.push(tenant_task(h, "clinic-a", &format!("r{n}"), &crm, Region::EU, 0).await);
    }
    // Not due yet: neither in flight nor in the due backlog.
    tenant_task(h, "clinic-a", "later", &crm, Region::EU, 600).await;
    let claimed = s.claim_due(&claim(Region::EU, "c", 4)).await.unwrap();
    assert_eq!(claimed.len(), 4);
    fail_gone(h, &claimed[0]).await;
    limited_until(h, &claimed[1], t0() + Duration::minutes(5)).await;
    // Two stay leased; two were never claimed and are due.
    let summaries = s.destination_summaries(Region::EU).await.unwrap();
    let names: Vec<&str> = summaries
        .iter()
        .map(|d| d.destination.id.as_str())
        .collect();
    assert_eq!(
        names,
        vec!["crm", "idle"],
        "the region's destinations, by id"
    );
    let c = &summaries[0];
    assert_eq!(
        (
            c.in_flight,
            c.due_backlog,
            c.rate_limited_last_hour,
            c.failed_last_hour
        ),
        (2, 2, 1, 1)
    );
    assert_eq!(c.retrying, 1, "the 429's task waits for its retry");
    assert_eq!(c.oldest_due, Some(t0()), "its oldest live task, due now");
    let i = &summaries[1];
    assert_eq!(i.destination.id, idle);
    assert_eq!(
        (
            i.in_flight,
            i.due_backlog,
            i.rate_limited_last_hour,
            i.failed_last_hour
        ),
        (0, 0, 0, 0)
    );
    assert_eq!((i.retrying, i.oldest_due), (0, None));
    assert_eq!(i.learned_quota, None);

    // An hour and more later the failure and the 429 are out of the window,
    // and the retry has come due.
    h.clock().advance(Duration::minutes(61));
    let later = s.destination_summaries(Region::EU).await.unwrap();
    let c = &later[0];
    assert_eq!((c.rate_limited_last_hour, c.failed_last_hour), (0, 0));
    assert_eq!(
        c.due_backlog, 4,
        "two never claimed, the retry and the later one"
    );
    assert_eq!(c.retrying, 1, "due, and still waiting for its retry");
    assert_eq!(c.oldest_due, Some(t0()), "still waiting since t0");
}

/// A destination's oldest wait is its oldest task that has not ended and
/// whose deadline has come: in flight or waiting; a task due later, or one
/// that ended, does not count.
pub async fn a_destination_summary_names_its_oldest_wait<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let first = tenant_task(h, "clinic-a", "first", &crm, Region::EU, 0).await;
    tenant_task(h, "clinic-a", "second", &crm, Region::EU, 30).await;
    tenant_task(h, "clinic-a", "later", &crm, Region::EU, 3600).await;
    let oldest = || async { s.destination_summaries(Region::EU).await.unwrap()[0].oldest_due };
    assert_eq!(oldest().await, Some(t0()));
    h.clock().advance(Duration::seconds(40));
    let claimed = s.claim_due(&claim(Region::EU, "c", 1)).await.unwrap();
    assert_eq!(claimed[0].task.id, first);
    assert_eq!(oldest().await, Some(t0()), "in flight still waits");
    deliver_one(h, &claimed[0]).await;
    assert_eq!(
        oldest().await,
        Some(t0() + Duration::seconds(30)),
        "delivered: the next one is the oldest"
    );
    end(h, Region::EU, &[]).await;
    assert_eq!(oldest().await, None, "the one left is not due yet");
}

/// A failure replayed since stays in the reports of the hour and the day
/// it happened (the failure chart, the destination's failures, `remit
/// status` by reason and by destination), and a second failure of the same
/// task counts again.
pub async fn a_replayed_failure_stays_in_the_reports<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let other = destination(h, "other", Region::EU).await;
    let id = tenant_task(h, "clinic-a", "r0", &crm, Region::EU, 0).await;
    let o = tenant_task(h, "clinic-a", "o0", &other, Region::EU, 0).await;
    h.clock().advance(Duration::seconds(5));
    end(h, Region::EU, &[id, o]).await;
    assert!(matches!(
        s.replay(id, Duration::hours(2)).await.unwrap(),
        Replayed::Replayed(_)
    ));
    h.clock().advance(Duration::minutes(2));
    let activity = s.activity(Region::EU).await.unwrap();
    let failed: i64 = activity.minutes.iter().map(|m| m.failed).sum();
    assert_eq!(failed, 2, "both failures, the replayed one included");
    assert_eq!(
        activity.minutes[57].failed, 2,
        "in the minute they happened"
    );
    assert_eq!(
        activity.failures_by_reason,
        vec![("http_410".to_owned(), 2)]
    );
    let summaries = s.destination_summaries(Region::EU).await.unwrap();
    assert_eq!(summaries[0].failed_last_hour, 1);
    assert_eq!(summaries[1].failed_last_hour, 1);

    // It fails again: two failures of crm's.
    end(h, Region::EU, &[id]).await;
    let report = s.status(Some(Region::EU)).await.unwrap();
    assert_eq!(report.failures_last_day, vec![("http_410".to_owned(), 3)]);
    assert_eq!(
        report.failures_by_destination_last_day,
        vec![(crm.clone(), 2), (other.clone(), 1)]
    );
    assert_eq!(
        s.destination_summaries(Region::EU).await.unwrap()[0].failed_last_hour,
        2
    );
    let us = s.status(Some(Region::US)).await.unwrap();
    assert!(
        us.failures_by_destination_last_day.is_empty(),
        "another region's"
    );

    // A day on, the day's lists are empty.
    h.clock().advance(Duration::days(1));
    let report = s.status(Some(Region::EU)).await.unwrap();
    assert!(report.failures_last_day.is_empty());
    assert!(report.failures_by_destination_last_day.is_empty());
}

pub async fn activity_counts_the_last_hour_by_minute<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let us = destination(h, "us-crm", Region::US).await;
    let mut eu = Vec::new();
    for n in 0..4 {
        eu.push(tenant_task(h, "clinic-a", &format!("r{n}"), &crm, Region::EU, 0).await);
    }
    let u = tenant_task(h, "clinic-a", "u", &us, Region::US, 0).await;
    // Everything ends ten seconds after it was due.
    h.clock().advance(Duration::seconds(10));
    let claimed = s.claim_due(&claim(Region::EU, "c", 4)).await.unwrap();
    for c in &claimed[..2] {
        deliver_one(h, c).await;
    }
    fail_gone(h, &claimed[2]).await;
    limited_until(h, &claimed[3], t0() + Duration::hours(2)).await;
    end(h, Region::US, &[u]).await;
    let reason = s
        .task(claimed[2].task.id)
        .await
        .unwrap()
        .unwrap()
        .failure_reason
        .unwrap();

    // Read half an hour later: all of it fell in the minute that ended 30
    // minutes ago, the 30th of the hour (index 29).
    h.clock().advance(Duration::minutes(30));
    let now = t0() + Duration::seconds(10) + Duration::minutes(30);
    let activity = s.activity(Region::EU).await.unwrap();
    assert_eq!(activity.now, now);
    assert_eq!(activity.minutes.len(), 60);
    assert_eq!(activity.minutes[0].start, now - Duration::minutes(60));
    assert_eq!(activity.minutes[59].start, now - Duration::minutes(1));
    for (i, m) in activity.minutes.iter().enumerate() {
        let expected = if i == 29 { (2, 1, 1) } else { (0, 0, 0) };
        assert_eq!(
            (m.delivered, m.failed, m.rate_limited),
            expected,
            "minute {i}"
        );
    }
    let latency = activity.minutes[29].deadline_to_delivery.unwrap();
    assert_eq!(
        (latency.count, latency.p50, latency.p99),
        (2, Duration::seconds(10), Duration::seconds(10))
    );
    assert!(activity.minutes[28].deadline_to_delivery.is_none());
    assert_eq!(activity.failures_by_reason, vec![(reason, 1)]);

    // An hour on, the hour is empty.
    h.clock().advance(Duration::minutes(31));
    let empty = s.activity(Region::EU).await.unwrap();
    assert!(empty
        .minutes
        .iter()
        .all(|m| m.delivered == 0 && m.failed == 0 && m.rate_limited == 0));
    assert!(empty.failures_by_reason.is_empty());
}

pub async fn activity_puts_each_end_in_the_minute_it_closes<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    task(h, "r0", &crm, Region::EU).await;
    task(h, "r1", &crm, Region::EU).await;
    h.clock().advance(Duration::seconds(5));
    let claimed = s.claim_due(&claim(Region::EU, "c", 2)).await.unwrap();
    deliver_one(h, &claimed[0]).await;
    fail_gone(h, &claimed[1]).await;
    let ended = t0() + Duration::seconds(5);
    let minute_of = |activity: &remit::store::console::Activity| {
        activity
            .minutes
            .iter()
            .position(|m| m.delivered == 1 && m.failed == 1)
    };
    // At the instant they ended, in the minute that ends now.
    let now = s.activity(Region::EU).await.unwrap();
    assert_eq!(now.now, ended);
    assert_eq!(minute_of(&now), Some(59));
    h.clock().advance(Duration::seconds(30));
    assert_eq!(minute_of(&s.activity(Region::EU).await.unwrap()), Some(59));
    h.clock().advance(Duration::seconds(30));
    assert_eq!(
        minute_of(&s.activity(Region::EU).await.unwrap()),
        Some(58),
        "a minute on, the minute before"
    );
    h.clock()
        .advance(Duration::minutes(58) + Duration::seconds(59));
    let last = s.activity(Region::EU).await.unwrap();
    assert_eq!(minute_of(&last), Some(0), "the oldest minute holds its end");
    assert_eq!(last.failures_by_reason, vec![("http_410".to_owned(), 1)]);
    h.clock().advance(Duration::seconds(1));
    let gone = s.activity(Region::EU).await.unwrap();
    assert_eq!(gone.now, ended + Duration::hours(1));
    assert_eq!(minute_of(&gone), None, "an hour on, it is out");
    assert!(gone.failures_by_reason.is_empty());
    let summary = &s.destination_summaries(Region::EU).await.unwrap()[0];
    assert_eq!(summary.failed_last_hour, 0);
}

pub async fn a_destination_summary_carries_its_learned_quota<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let note = remit::store::QuotaNote {
        destination: crm.clone(),
        quota: remit::policy::Quota {
            remaining: 40,
            resets_in: Duration::seconds(60),
            limit: Some(100),
            window: None,
        },
        token: 0,
        sent_at: t0(),
    };
    s.learn_quotas(&[note]).await.unwrap();
    let learned = s.destination_summaries(Region::EU).await.unwrap()[0]
        .learned_quota
        .clone()
        .unwrap();
    assert_eq!(learned.limit, Some(100));
    assert_eq!(learned.remaining, 40.0);
    assert_eq!(learned.resets_at, t0() + Duration::seconds(60));
    assert_eq!(learned.learned_at, t0());
    // A take paced by it spends from what remains.
    let take = remit::store::RateRequest {
        destination: crm.clone(),
        rate_per_second: 10.0,
        burst: 10,
        want: 3,
    };
    let granted = match s.take_tokens_many(&[take]).await.unwrap()[0] {
        Some(RateGrant::Granted { tokens, .. }) => f64::from(tokens),
        _ => 0.0,
    };
    assert!(granted >= 1.0, "the quota leaves some to take");
    let after = s.destination_summaries(Region::EU).await.unwrap()[0]
        .learned_quota
        .clone()
        .unwrap();
    assert_eq!(after.remaining, 40.0 - granted);
    assert_eq!(after.learned_at, t0());
}

/// A task cancelled while its attempt was in flight, whose attempt then
/// failed for good, ends `cancelled` at the settle; its failure still
/// counts where it happened.
pub async fn a_failure_settled_into_a_cancel_still_counts<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let id = tenant_task(h, "clinic-a", "r0", &crm, Region::EU, 0).await;
    let claimed = s.claim_due(&claim(Region::EU, "c", 1)).await.unwrap();
    assert!(matches!(
        s.cancel(id, "ops").await.unwrap(),
        remit::store::Cancel::AfterAttempt(_)
    ));
    fail_gone(h, &claimed[0]).await;
    assert_eq!(s.settle_changes(Region::EU, 10).await.unwrap(), 1);
    assert_eq!(
        s.task(id).await.unwrap().unwrap().state,
        TaskState::Cancelled
    );
    let summary = &s.destination_summaries(Region::EU).await.unwrap()[0];
    assert_eq!(summary.failed_last_hour, 1);
    let activity = s.activity(Region::EU).await.unwrap();
    assert_eq!(activity.minutes.iter().map(|m| m.failed).sum::<i64>(), 1);
}
