//! The console's reads on both stores: the task search by each field,
//! its pages and a tenant-limited caller's view, each destination's
//! counts, and the last hour minute by minute.

use chrono::Duration;
use remit::domain::{
    AttemptRecord, DestinationId, FailureReason, Region, ReminderId, TaskId, TaskState, TenantId,
};
use remit::store::console::TaskFilter;
use remit::store::Reports;
use remit::store::Store;

use crate::support::{delivered, new_task, retry_at, t0, Backend, TestDb};

/// Schedules a task for `tenant` due at t0 + `offset_s` seconds.
async fn task(
    db: &TestDb,
    tenant: &str,
    reminder: &str,
    destination: &DestinationId,
    region: Region,
    offset_s: i64,
) -> TaskId {
    let mut new = new_task(reminder, destination, region);
    new.tenant_id = TenantId::new(tenant).unwrap();
    new.not_before = t0() + Duration::seconds(offset_s);
    db.store.schedule(new).await.unwrap().task.id
}

/// Claims everything due in `region` and fails the tasks in `ids`,
/// delivering the rest of what was claimed.
async fn end(db: &TestDb, region: Region, fail: &[TaskId]) {
    let claimed = db.claim(region, "console-test", 100).await;
    for c in claimed {
        if fail.contains(&c.task.id) {
            db.store
                .fail(
                    &c.lease(),
                    &FailureReason::Status(410),
                    &AttemptRecord::default(),
                )
                .await
                .unwrap();
        } else {
            db.store
                .finish(
                    &c.lease(),
                    &c.task.destination_id,
                    &delivered(AttemptRecord::default()),
                )
                .await
                .unwrap();
        }
    }
}

fn ids(page: &remit::store::console::TaskPage) -> Vec<TaskId> {
    page.tasks.iter().map(|t| t.id).collect()
}

#[tokio::test]
async fn console_search_finds_tasks_by_each_field_on_postgres() {
    search_by_each_field(Backend::Postgres).await;
}

#[tokio::test]
async fn console_search_finds_tasks_by_each_field_on_sqlite() {
    search_by_each_field(Backend::Sqlite).await;
}

async fn search_by_each_field(backend: Backend) {
    let db = TestDb::on(backend).await;
    let crm = db.destination("crm", Region::EU).await;
    let sms = db.destination("sms", Region::EU).await;
    let us = db.destination("us-crm", Region::US).await;
    let a1 = task(&db, "clinic-a", "r1", &crm, Region::EU, 0).await;
    let a2 = task(&db, "clinic-a", "r2", &sms, Region::EU, -60).await;
    let b1 = task(&db, "clinic-b", "r1", &crm, Region::EU, -120).await;
    let b2 = task(&db, "clinic-b", "r2", &sms, Region::EU, 3600).await;
    let u1 = task(&db, "clinic-a", "r9", &us, Region::US, 0).await;
    // b1 fails, a1 and a2 are delivered; b2 is not due yet.
    end(&db, Region::EU, &[b1]).await;
    let s = &db.store;
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

#[tokio::test]
async fn console_search_pages_on_postgres() {
    search_pages(Backend::Postgres).await;
}

#[tokio::test]
async fn console_search_pages_on_sqlite() {
    search_pages(Backend::Sqlite).await;
}

async fn search_pages(backend: Backend) {
    let db = TestDb::on(backend).await;
    let crm = db.destination("crm", Region::EU).await;
    let mut all = Vec::new();
    for n in 0..7 {
        all.push(task(&db, "clinic-a", &format!("r{n}"), &crm, Region::EU, 0).await);
    }
    all.reverse();
    let mut seen = Vec::new();
    let mut before = None;
    let mut pages = 0;
    loop {
        let page = db
            .store
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

#[tokio::test]
async fn console_destination_summaries_count_on_postgres() {
    destination_summaries_count(Backend::Postgres).await;
}

#[tokio::test]
async fn console_destination_summaries_count_on_sqlite() {
    destination_summaries_count(Backend::Sqlite).await;
}

async fn destination_summaries_count(backend: Backend) {
    let db = TestDb::on(backend).await;
    let s = &db.store;
    let crm = db.destination("crm", Region::EU).await;
    let idle = db.destination("idle", Region::EU).await;
    db.destination("us-crm", Region::US).await;
    let mut tasks = Vec::new();
    for n in 0..6 {
        tasks.push(task(&db, "clinic-a", &format!("r{n}"), &crm, Region::EU, 0).await);
    }
    // Not due yet: neither in flight nor in the due backlog.
    task(&db, "clinic-a", "later", &crm, Region::EU, 600).await;
    let claimed = db.claim(Region::EU, "c", 4).await;
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
        &retry_at(s.clock(), t0() + Duration::minutes(5), limited),
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
    db.clock().advance(Duration::minutes(61));
    let later = s.destination_summaries(Region::EU).await.unwrap();
    let c = &later[0];
    assert_eq!((c.rate_limited_last_hour, c.failed_last_hour), (0, 0));
    assert_eq!(
        c.due_backlog, 4,
        "two never claimed, the retry and the later one"
    );
}

#[tokio::test]
async fn console_activity_counts_by_minute_on_postgres() {
    activity_by_minute(Backend::Postgres).await;
}

#[tokio::test]
async fn console_activity_counts_by_minute_on_sqlite() {
    activity_by_minute(Backend::Sqlite).await;
}

async fn activity_by_minute(backend: Backend) {
    let db = TestDb::on(backend).await;
    let s = &db.store;
    let crm = db.destination("crm", Region::EU).await;
    let us = db.destination("us-crm", Region::US).await;
    let mut eu = Vec::new();
    for n in 0..4 {
        eu.push(task(&db, "clinic-a", &format!("r{n}"), &crm, Region::EU, 0).await);
    }
    let u = task(&db, "clinic-a", "u", &us, Region::US, 0).await;
    // Everything ends ten seconds after it was due.
    db.clock().advance(Duration::seconds(10));
    let claimed = db.claim(Region::EU, "c", 4).await;
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
        &retry_at(s.clock(), t0() + Duration::hours(2), limited),
    )
    .await
    .unwrap();
    end(&db, Region::US, &[u]).await;
    let reason = s
        .task(claimed[2].task.id)
        .await
        .unwrap()
        .unwrap()
        .failure_reason
        .unwrap();

    // Read half an hour later: all of it fell in the minute that ended 30
    // minutes ago, the 30th of the hour (index 29).
    db.clock().advance(Duration::minutes(30));
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
    db.clock().advance(Duration::minutes(31));
    let empty = s.activity(Region::EU).await.unwrap();
    assert!(empty
        .minutes
        .iter()
        .all(|m| m.delivered == 0 && m.failed == 0 && m.rate_limited == 0));
    assert!(empty.failures_by_reason.is_empty());
}
