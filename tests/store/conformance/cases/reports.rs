//! `Reports`: what `remit status`, the gauges and the console read. The
//! status report and the gauges' queue; the task search by each field,
//! its pages and a tenant-limited caller's view; each destination's
//! counts; and the last hour minute by minute.

use remit::domain::{ReminderId, TenantId};
use remit::store::console::{TaskFilter, TaskPage};
use remit::store::Reports;

use super::*;

/// Schedules a task for `tenant` due at t0 + `offset_s` seconds.
async fn tenant_task<H: Harness>(
    h: &H,
    tenant: &str,
    reminder: &str,
    destination: &DestinationId,
    region: Region,
    offset_s: i64,
) -> TaskId {
    let mut new = crate::support::new_task(reminder, destination, region);
    new.tenant_id = TenantId::new(tenant).unwrap();
    new.not_before = t0() + Duration::seconds(offset_s);
    h.store().schedule(new).await.unwrap().task.id
}

/// Claims everything due in `region` and fails the tasks in `fail`,
/// delivering the rest of what was claimed.
async fn end<H: Harness>(h: &H, region: Region, fail: &[TaskId]) {
    let s = h.store();
    let claimed = s
        .claim_due(&claim(region, "console-test", 100))
        .await
        .unwrap();
    for c in claimed {
        if fail.contains(&c.task.id) {
            s.fail(
                &c.lease(),
                &FailureReason::Status(410),
                &AttemptRecord::default(),
            )
            .await
            .unwrap();
        } else {
            s.finish(
                &c.lease(),
                &c.task.destination_id,
                &delivered(AttemptRecord::default()),
            )
            .await
            .unwrap();
        }
    }
}

fn ids(page: &TaskPage) -> Vec<TaskId> {
    page.tasks.iter().map(|t| t.id).collect()
}

pub async fn status_reads_the_queue<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let slow = destination(h, "slow", Region::EU).await;
    let us = destination(h, "us-crm", Region::US).await;
    for n in 0..6 {
        task(
            h,
            &format!("r{n}"),
            if n % 2 == 0 { &crm } else { &slow },
            Region::EU,
        )
        .await;
    }
    task(h, "u1", &us, Region::US).await;
    h.clock().advance(Duration::seconds(10));
    let claimed = s.claim_due(&claim(Region::EU, "c", 4)).await.unwrap();
    assert_eq!(claimed.len(), 4);
    let limited = AttemptRecord {
        http_status: Some(429),
        ..AttemptRecord::default()
    };
    s.finish(
        &claimed[0].lease(),
        &claimed[0].task.destination_id,
        &delivered(AttemptRecord::default()),
    )
    .await
    .unwrap();
    s.fail(
        &claimed[1].lease(),
        &FailureReason::Status(410),
        &AttemptRecord::default(),
    )
    .await
    .unwrap();
    s.finish(
        &claimed[2].lease(),
        &claimed[2].task.destination_id,
        &retry_at(h.clock(), t0() + Duration::minutes(5), limited.clone()),
    )
    .await
    .unwrap();
    s.pause_destination(&slow, Duration::minutes(2))
        .await
        .unwrap();
    // The fourth lease runs out.
    h.clock().advance(Duration::seconds(40));

    let report = s.status(Some(Region::EU)).await.unwrap();
    assert_eq!(report.now, t0() + Duration::seconds(50));
    assert_eq!(report.regions.len(), 1, "only the region asked for");
    let eu = &report.regions[0];
    assert_eq!(
        (
            eu.pending,
            eu.leased,
            eu.retry_wait,
            eu.delivered,
            eu.failed
        ),
        (2, 1, 1, 1, 1)
    );
    assert_eq!(eu.expired_leases, 1);
    assert_eq!(
        eu.oldest_eligible,
        Some(Duration::seconds(50)),
        "due since t0"
    );
    assert_eq!(report.paused.len(), 1);
    assert_eq!(report.paused[0].0, slow);
    assert_eq!(report.top_retry_wait.len(), 1);
    assert_eq!(report.top_rate_limited[0].1, 1);
    assert_eq!(report.failures_last_day, vec![("http_410".to_owned(), 1)]);
    let latency = report.deadline_to_delivery.unwrap();
    assert_eq!((latency.count, latency.p50), (1, Duration::seconds(10)));
    // The counts alone (the console's overview) are the report's.
    let counts = s.region_counts(Region::EU).await.unwrap();
    assert_eq!((counts.now, &counts.counts), (report.now, eu));

    let all = s.status(None).await.unwrap();
    assert_eq!(all.regions.len(), 2, "every region");
    assert_eq!(
        all.regions
            .iter()
            .map(|r| r.region.map(|r| r.to_string()))
            .collect::<Vec<_>>(),
        vec![Some("eu".to_owned()), Some("us".to_owned())],
        "in name order"
    );
    assert_eq!(&all.regions[0], eu, "a region counts alike either way");
    assert_eq!(
        (all.regions[1].pending, all.regions[1].delivered),
        (1, 0),
        "the other region's own counts"
    );
    assert_eq!(all.top_retry_wait, report.top_retry_wait);
    // Work the claim would skip is not work waiting: with both destinations
    // of the region paused, nothing is eligible.
    s.pause_destination(&crm, Duration::minutes(2))
        .await
        .unwrap();
    let held = s.queue(Region::EU).await.unwrap();
    assert_eq!((held.pending, held.retry_wait, held.leased), (2, 1, 1));
    assert_eq!(
        held.oldest_eligible, None,
        "paused destinations hold their tasks"
    );
    assert_eq!(held.expired_leases, 1);
    let queue = s.queue(Region::US).await.unwrap();
    assert_eq!(
        (queue.pending, queue.delivered),
        (1, 0),
        "a gauge's read skips terminal rows"
    );
}

pub async fn the_console_search_finds_tasks_by_each_field<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let sms = destination(h, "sms", Region::EU).await;
    let us = destination(h, "us-crm", Region::US).await;
    let a1 = tenant_task(h, "clinic-a", "r1", &crm, Region::EU, 0).await;
    let a2 = tenant_task(h, "clinic-a", "r2", &sms, Region::EU, -60).await;
    let b1 = tenant_task(h, "clinic-b", "r1", &crm, Region::EU, -120).await;
    let b2 = tenant_task(h, "clinic-b", "r2", &sms, Region::EU, 3600).await;
    let u1 = tenant_task(h, "clinic-a", "r9", &us, Region::US, 0).await;
    // b1 fails, a1 and a2 are delivered; b2 is not due yet.
    end(h, Region::EU, &[b1]).await;
    let search = |filter: TaskFilter| async move {
        s.search_tasks(Region::EU, &filter, None, 50).await.unwrap()
    };

    let every = search(TaskFilter::default()).await;
    assert_eq!(
        ids(&every),
        vec![b2, b1, a2, a1],
        "the region's tasks, newest first"
    );
    assert_eq!(every.next, None);
    assert!(
        !ids(&every).contains(&u1),
        "another region's task is never listed"
    );

    let by_id = search(TaskFilter {
        id: Some(a2),
        ..TaskFilter::default()
    })
    .await;
    assert_eq!(ids(&by_id), vec![a2]);
    let other_region = s
        .search_tasks(
            Region::EU,
            &TaskFilter {
                id: Some(u1),
                ..TaskFilter::default()
            },
            None,
            50,
        )
        .await
        .unwrap();
    assert!(other_region.tasks.is_empty());

    let tenant = search(TaskFilter {
        tenant: Some(TenantId::new("clinic-b").unwrap()),
        ..TaskFilter::default()
    })
    .await;
    assert_eq!(ids(&tenant), vec![b2, b1]);

    let reminder = search(TaskFilter {
        tenant: Some(TenantId::new("clinic-a").unwrap()),
        reminder: Some(ReminderId::new("r2").unwrap()),
        ..TaskFilter::default()
    })
    .await;
    assert_eq!(ids(&reminder), vec![a2]);

    let destination = search(TaskFilter {
        destination: Some(sms.clone()),
        ..TaskFilter::default()
    })
    .await;
    assert_eq!(ids(&destination), vec![b2, a2]);

    for (state, expected) in [
        (TaskState::Failed, vec![b1]),
        (TaskState::Delivered, vec![a2, a1]),
        (TaskState::Pending, vec![b2]),
        (TaskState::Leased, vec![]),
    ] {
        let found = search(TaskFilter {
            state: Some(state),
            ..TaskFilter::default()
        })
        .await;
        assert_eq!(ids(&found), expected, "state {state:?}");
    }

    // not_before in [t0 - 90 s, t0 + 1 h): a2 (t0 - 60 s) and a1 (t0);
    // b2 is due exactly at the end, which is left out.
    let range = search(TaskFilter {
        from: Some(t0() - Duration::seconds(90)),
        until: Some(t0() + Duration::seconds(3600)),
        ..TaskFilter::default()
    })
    .await;
    assert_eq!(ids(&range), vec![a2, a1]);

    let limited = search(TaskFilter {
        only_tenants: Some(vec![TenantId::new("clinic-a").unwrap()]),
        ..TaskFilter::default()
    })
    .await;
    assert_eq!(
        ids(&limited),
        vec![a2, a1],
        "a tenant-limited caller sees its tenants only"
    );
    let outside = search(TaskFilter {
        id: Some(b1),
        only_tenants: Some(vec![TenantId::new("clinic-a").unwrap()]),
        ..TaskFilter::default()
    })
    .await;
    assert!(
        outside.tasks.is_empty(),
        "another tenant's task is not found by its id"
    );
}

pub async fn the_console_search_pages_newest_first<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let mut all = Vec::new();
    for n in 0..7 {
        all.push(tenant_task(h, "clinic-a", &format!("r{n}"), &crm, Region::EU, 0).await);
    }
    all.reverse();
    let mut seen = Vec::new();
    let mut before = None;
    let mut pages = 0;
    loop {
        let page = s
            .search_tasks(Region::EU, &TaskFilter::default(), before, 3)
            .await
            .unwrap();
        assert!(page.tasks.len() <= 3);
        seen.extend(ids(&page));
        pages += 1;
        match page.next {
            Some(next) => before = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, all, "every task once, newest first, over the pages");
    assert_eq!(pages, 3);
}

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
    s.fail(
        &claimed[0].lease(),
        &FailureReason::Status(410),
        &AttemptRecord::default(),
    )
    .await
    .unwrap();
    let limited = AttemptRecord {
        http_status: Some(429),
        ..AttemptRecord::default()
    };
    s.finish(
        &claimed[1].lease(),
        &crm,
        &retry_at(h.clock(), t0() + Duration::minutes(5), limited),
    )
    .await
    .unwrap();
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
        s.finish(&c.lease(), &crm, &delivered(AttemptRecord::default()))
            .await
            .unwrap();
    }
    s.fail(
        &claimed[2].lease(),
        &FailureReason::Status(410),
        &AttemptRecord::default(),
    )
    .await
    .unwrap();
    let limited = AttemptRecord {
        http_status: Some(429),
        ..AttemptRecord::default()
    };
    s.finish(
        &claimed[3].lease(),
        &crm,
        &retry_at(h.clock(), t0() + Duration::hours(2), limited),
    )
    .await
    .unwrap();
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

/// Claims every task due in `region` and fails each with the reason at its
/// place in `reasons`, in the order the claim answered them.
async fn fail_each<H: Harness>(h: &H, region: Region, reasons: &[FailureReason]) {
    let s = h.store();
    let claimed = s.claim_due(&claim(region, "c", 100)).await.unwrap();
    assert_eq!(claimed.len(), reasons.len(), "one reason per task due");
    for (c, reason) in claimed.iter().zip(reasons) {
        s.fail(&c.lease(), reason, &AttemptRecord::default())
            .await
            .unwrap();
    }
}

pub async fn status_lists_refusals_disabled_destinations_and_failures_most_first<H: Harness>(
    h: &H,
) {
    let s = h.store();
    let a = destination(h, "a", Region::EU).await;
    let b = destination(h, "b", Region::EU).await;
    let us = destination(h, "us-crm", Region::US).await;
    for n in 0..3 {
        task(h, &format!("a{n}"), &a, Region::EU).await;
    }
    task(h, "b0", &b, Region::EU).await;
    task(h, "u0", &us, Region::US).await;
    fail_each(
        h,
        Region::EU,
        &[
            FailureReason::Status(500),
            FailureReason::Status(410),
            FailureReason::MaxAttempts,
            FailureReason::Status(410),
        ],
    )
    .await;
    let later = task(h, "b1", &b, Region::EU).await;
    s.mark_refused(&a, "private address".into()).await.unwrap();
    s.disable_destination(&b, Some("by hand".into()))
        .await
        .unwrap();

    let report = s.status(Some(Region::EU)).await.unwrap();
    let mut reasons = report.failures_last_day.clone();
    reasons.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    assert_eq!(
        report.failures_last_day, reasons,
        "most first, then by name"
    );
    assert_eq!(report.failures_last_day[0], ("http_410".to_owned(), 2));
    assert_eq!(report.failures_last_day.len(), 3);
    assert_eq!(report.refused.len(), 1);
    assert_eq!(
        (
            &report.refused[0].destination,
            report.refused[0].region,
            report.refused[0].why.as_str(),
            report.refused[0].last
        ),
        (&a, Region::EU, "private address", t0())
    );
    assert_eq!(
        report.disabled,
        vec![s.destination(&b).await.unwrap().unwrap()],
        "the disabled destination as it reads"
    );
    assert_eq!(report.regions[0].oldest_eligible, None, "b is disabled");
    let eu = s.queue(Region::EU).await.unwrap();
    assert_eq!((eu.pending, eu.disabled_destinations), (1, 1));
    assert_eq!(s.queue(Region::US).await.unwrap().disabled_destinations, 0);
    assert!(s.status(Some(Region::US)).await.unwrap().refused.is_empty());

    // A refusal is listed for ten minutes after it was last recorded, the
    // failures for a day.
    h.clock().advance(Duration::minutes(10));
    let report = s.status(None).await.unwrap();
    assert!(report.refused.is_empty(), "an old refusal drops off");
    assert_eq!(report.failures_last_day.len(), 3);
    h.clock().advance(Duration::days(1));
    let report = s.status(None).await.unwrap();
    assert!(report.failures_last_day.is_empty());
    assert_eq!(report.regions[0].failed, 4, "ended tasks still count");
    assert_eq!(
        s.task(later).await.unwrap().unwrap().state,
        TaskState::Pending,
        "a disabled destination's task waits"
    );

    // A region with no task at all counts nothing, and is not listed.
    let none = s.region_counts(Region::new("ap").unwrap()).await.unwrap();
    assert_eq!(
        (
            none.counts.pending,
            none.counts.delivered,
            none.counts.oldest_eligible
        ),
        (0, 0, None)
    );
    assert_eq!(report.regions.len(), 2);
}

pub async fn a_search_page_is_held_within_one_and_max_page<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let mut all = Vec::new();
    for n in 0..3 {
        all.push(tenant_task(h, "clinic-a", &format!("r{n}"), &crm, Region::EU, 0).await);
    }
    all.reverse();
    let every = TaskFilter::default();
    let none = s.search_tasks(Region::EU, &every, None, 0).await.unwrap();
    assert_eq!(ids(&none), all[..1], "a limit of 0 reads one");
    assert_eq!(none.next, Some(all[0]));
    let most = s
        .search_tasks(Region::EU, &every, None, u32::MAX)
        .await
        .unwrap();
    assert_eq!((ids(&most), most.next), (all.clone(), None));
    let below = s
        .search_tasks(Region::EU, &every, Some(all[1]), 10)
        .await
        .unwrap();
    assert_eq!(ids(&below), all[2..], "strictly below `before`");
    let nobody = s
        .search_tasks(
            Region::EU,
            &TaskFilter {
                only_tenants: Some(Vec::new()),
                ..TaskFilter::default()
            },
            None,
            10,
        )
        .await
        .unwrap();
    assert!(
        nobody.tasks.is_empty(),
        "a caller limited to no tenant sees nothing"
    );
}

pub async fn activity_puts_each_end_in_the_minute_it_closes<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    task(h, "r0", &crm, Region::EU).await;
    task(h, "r1", &crm, Region::EU).await;
    h.clock().advance(Duration::seconds(5));
    let claimed = s.claim_due(&claim(Region::EU, "c", 2)).await.unwrap();
    s.finish(
        &claimed[0].lease(),
        &crm,
        &delivered(AttemptRecord::default()),
    )
    .await
    .unwrap();
    s.fail(
        &claimed[1].lease(),
        &FailureReason::Status(410),
        &AttemptRecord::default(),
    )
    .await
    .unwrap();
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
    let take = remit::store::TokenRequest {
        destination: crm.clone(),
        rate_per_second: 10.0,
        burst: 10,
        want: 3,
    };
    let granted = match s.take_tokens_many(&[take]).await.unwrap()[0] {
        Some(Tokens::Granted { tokens, .. }) => f64::from(tokens),
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

pub async fn a_search_takes_its_instants_to_the_microsecond<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let due = tenant_task(h, "clinic-a", "r0", &crm, Region::EU, 0).await;
    // Half a microsecond after the task's deadline: a store keeps
    // microseconds, so this is the deadline itself.
    let just_after = t0() + Duration::nanoseconds(500);
    let search = |filter: TaskFilter| async move {
        s.search_tasks(Region::EU, &filter, None, 10).await.unwrap()
    };
    let from = search(TaskFilter {
        from: Some(just_after),
        ..TaskFilter::default()
    })
    .await;
    assert_eq!(ids(&from), vec![due], "from the deadline on");
    let until = search(TaskFilter {
        until: Some(just_after),
        ..TaskFilter::default()
    })
    .await;
    assert!(ids(&until).is_empty(), "before the deadline");
}
