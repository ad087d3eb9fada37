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
