//! `Reports`: the console's task search by each field, its pages, a
//! tenant-limited caller's view, its limits and its instants.

use remit::domain::{ReminderId, TenantId};
use remit::store::console::TaskFilter;
use remit::store::Reports;

use super::*;

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
