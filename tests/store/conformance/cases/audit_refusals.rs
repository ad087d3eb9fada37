//! The audit log's other half: what writes no entry (a refused call, a
//! rolled-back one), imports and a rekey, a handle no one acts through,
//! pages and filters, and retention.

use remit::domain::{Actor, AuditAction, AuditFilter, Rotation, TargetKind, TokenGrant, TokenId};
use remit::store::{
    ApiTokens, AuditScope, Cancel, Changes, Destinations, Jobs, Keys, Leases, Move, Reports,
    Schedule, Transfer, Upkeep,
};
use remit::store::{JobAction, JobFilter, NewJob};

use super::audit_log::{entries_after, newest_id, ops};
use super::changes::to;
use super::*;

pub async fn a_refused_or_rolled_back_action_writes_no_entry<H: Harness>(h: &H) {
    let s = h.acting_as(ops());
    let crm = destination(h, "crm", Region::US).await;
    let id = task(h, "delivered", &crm, Region::US).await;
    let c = claim_one(h).await;
    s.finish(&c.lease(), &crm, &delivered(record(200)))
        .await
        .unwrap();
    let grant = TokenGrant {
        scope: "admin".into(),
        tenants: vec![],
        expires_at: None,
        name: None,
    };
    let (token, _) = grant.check(t0()).unwrap();
    s.add_api_token(token.clone()).await.unwrap();
    let marker = newest_id(&s).await;

    let other_url = NewDestination::new(crm.clone(), Region::US, "http://127.0.0.2:9/", None);
    assert!(matches!(
        s.add_destination(other_url.unwrap()).await,
        Err(StoreError::Conflict { .. })
    ));
    assert!(matches!(
        s.add_api_token(token).await,
        Err(StoreError::Conflict { .. })
    ));
    let missing_token = TokenId::new("tok_0123456789abcdef").unwrap();
    assert_eq!(s.revoke_api_token(&missing_token).await.unwrap(), None);
    let missing = DestinationId::new("nowhere").unwrap();
    assert!(s.disable_destination(&missing, None).await.is_err());
    assert!(s.enable_destination(&missing).await.is_err());
    let rotation = Rotation::new("whsec_x".into(), None, t0()).unwrap();
    assert!(s.rotate_secret(&missing, rotation).await.is_err());
    assert_eq!(s.retry_now(&missing, None).await.unwrap(), 0);
    let unknown = TaskId(uuid::Uuid::from_u128(7));
    assert_eq!(s.cancel(unknown, "x").await.unwrap(), Cancel::NotFound);
    assert!(matches!(s.cancel(id, "x").await.unwrap(), Cancel::Ended(_)));
    let later = t0() + Duration::days(1);
    assert!(matches!(
        s.reschedule(id, &to(later)).await.unwrap(),
        Move::Refused(_)
    ));
    assert!(matches!(
        s.replay(id, Duration::hours(1)).await.unwrap(),
        Replayed::NotFailed(_)
    ));
    let refused_job = NewJob {
        region: Region::US,
        action: JobAction::Cancel,
        filter: JobFilter {
            reason: Some("max_attempts".into()),
            ..JobFilter::default()
        },
        requested_by: "tok_ops".into(),
        horizon: Duration::hours(1),
    };
    assert!(s.create_job(refused_job).await.is_err());
    let exported = s.export_destinations().await.unwrap();
    let copy = h.another_empty().await;
    let elsewhere = NewDestination::new(crm, Region::US, "http://127.0.0.3:9/", None).unwrap();
    copy.store().add_destination(elsewhere).await.unwrap();
    let copy_marker = newest_id(copy.store()).await;
    let importer = copy.acting_as(ops());
    assert!(importer.import_destinations(exported).await.is_err());

    assert_eq!(entries_after(&s, marker).await, [], "nothing was done");
    assert_eq!(
        entries_after(copy.store(), copy_marker).await,
        [],
        "nothing was imported"
    );
}

pub async fn imports_and_a_rekey_are_recorded_and_a_plain_handle_is_system<H: Harness>(h: &H) {
    let crm = destination(h, "crm", Region::US).await;
    task(h, "a", &crm, Region::US).await;
    task(h, "b", &crm, Region::US).await;
    let by_system = entries_after(h.store(), 0).await;
    assert_eq!(by_system.len(), 1, "{by_system:?}");
    assert_eq!(
        (by_system[0].action, &by_system[0].actor),
        (AuditAction::DestinationCreate, &Actor::System)
    );

    let destinations = h.store().export_destinations().await.unwrap();
    let tasks = h.store().export_tasks(None, 100).await.unwrap();
    let copy = h.another_empty().await;
    let alice = Actor::Cli {
        user: "alice".into(),
    };
    let t = copy.acting_as(alice.clone());
    t.import_destinations(destinations).await.unwrap();
    t.import_tasks(tasks.clone()).await.unwrap();
    t.import_tasks(tasks).await.unwrap();
    t.forget_unused_keys().await.unwrap();

    let entries = entries_after(&t, 0).await;
    let what: Vec<(AuditAction, TargetKind, &str)> = entries
        .iter()
        .map(|e| (e.action, e.target.kind, e.target.id.as_str()))
        .collect();
    let newest = remit::payload_crypto::hex(t.payload_key().fingerprint());
    use AuditAction::{Import, Rekey};
    use TargetKind::{Import as Imported, PayloadKey};
    assert_eq!(
        what,
        [
            (Import, Imported, "destinations"),
            (Import, Imported, "tasks"),
            (Import, Imported, "tasks"),
            (Rekey, PayloadKey, newest.as_str()),
        ]
    );
    let after = |i: usize| entries[i].after.clone().unwrap();
    assert_eq!(
        (after(0)["records"].clone(), after(0)["added"].clone()),
        (1.into(), 1.into())
    );
    assert_eq!(
        (after(1)["added"].clone(), after(1)["already"].clone()),
        (2.into(), 0.into())
    );
    assert_eq!(
        (after(2)["added"].clone(), after(2)["already"].clone()),
        (0.into(), 2.into())
    );
    assert_eq!(after(3)["forgotten"], serde_json::json!([]));
    assert!(entries
        .iter()
        .all(|e| e.actor == alice && e.region.is_none()));
}

pub async fn the_audit_log_pages_newest_first_and_filters<H: Harness>(h: &H) {
    let a = h.acting_as(Actor::Token {
        id: "tok_a".into(),
        name: None,
    });
    let b = h.acting_as(Actor::Cli {
        user: "alice".into(),
    });
    let d1 = DestinationId::new("d1").unwrap();
    let d2 = DestinationId::new("d2").unwrap();
    let new = |id: &DestinationId| {
        NewDestination::new(id.clone(), Region::EU, "http://127.0.0.1:9/", None).unwrap()
    };
    a.add_destination(new(&d1)).await.unwrap();
    a.disable_destination(&d1, None).await.unwrap();
    h.clock().advance(Duration::hours(1));
    b.add_destination(new(&d2)).await.unwrap();
    b.disable_destination(&d2, None).await.unwrap();
    b.enable_destination(&d2).await.unwrap();

    let s = h.store();
    let all = entries_after(s, 0).await;
    assert_eq!(all.len(), 5);
    let mut paged = Vec::new();
    let mut before = None;
    let mut pages = 0;
    loop {
        let page = s
            .audit_entries(&AuditFilter::default(), before, 2)
            .await
            .unwrap();
        assert!(page.entries.len() <= 2);
        assert!(
            page.entries.windows(2).all(|p| p[0].id > p[1].id),
            "newest first"
        );
        paged.extend(page.entries);
        pages += 1;
        match page.next {
            Some(next) => before = Some(next),
            None => break,
        }
    }
    paged.reverse();
    assert_eq!((paged, pages), (all.clone(), 3));

    let count = |filter: AuditFilter| async move {
        let page = s.audit_entries(&filter, None, 100).await.unwrap();
        assert!(page.entries.iter().all(|e| filter.admits(e)), "{filter:?}");
        page.entries.len()
    };
    let f = AuditFilter::default;
    assert_eq!(
        count(AuditFilter {
            action: Some(AuditAction::DestinationDisable),
            ..f()
        })
        .await,
        2
    );
    let d2_only = AuditFilter {
        target_kind: Some(TargetKind::Destination),
        target_id: Some("d2".into()),
        ..f()
    };
    assert_eq!(count(d2_only).await, 3);
    assert_eq!(
        count(AuditFilter {
            target_kind: Some(TargetKind::Token),
            ..f()
        })
        .await,
        0
    );
    for (who, n) in [
        ("tok_a", 2),
        ("token", 2),
        ("alice", 3),
        ("cli", 3),
        ("bootstrap", 0),
    ] {
        assert_eq!(
            count(AuditFilter {
                actor: Some(who.into()),
                ..f()
            })
            .await,
            n,
            "{who}"
        );
    }
    let hour = t0() + Duration::hours(1);
    assert_eq!(
        count(AuditFilter {
            since: Some(hour),
            ..f()
        })
        .await,
        3
    );
    assert_eq!(
        count(AuditFilter {
            until: Some(hour),
            ..f()
        })
        .await,
        2
    );
    let one = s.audit_entries(&f(), None, 0).await.unwrap();
    assert_eq!(one.entries.len(), 1, "a limit of 0 is held to 1");
    let capped = s.audit_entries(&f(), None, u32::MAX).await.unwrap();
    assert_eq!((capped.entries.len(), capped.next), (5, None));
}

pub async fn audit_retention_deletes_only_old_entries<H: Harness>(h: &H) {
    let s = h.acting_as(ops());
    let crm = destination(h, "crm", Region::US).await;
    s.disable_destination(&crm, None).await.unwrap();
    s.enable_destination(&crm).await.unwrap();
    h.clock().advance(Duration::days(10));
    s.disable_destination(&crm, None).await.unwrap();
    let kept = newest_id(&s).await;

    // An entry of no region (a token's), as old as the region's first.
    h.clock().advance(Duration::days(-10));
    let (new, _) = TokenGrant {
        scope: "read".into(),
        ..TokenGrant::default()
    }
    .check(t0())
    .unwrap();
    s.add_api_token(new).await.unwrap();
    h.clock().advance(Duration::days(10));
    let us = AuditScope::Region(Region::US);

    assert_eq!(s.prune_audit(us, Duration::days(11), 1).await.unwrap(), 0);
    // Another region's prune takes none of this region's entries.
    let eu = AuditScope::Region(Region::EU);
    assert_eq!(s.prune_audit(eu, Duration::days(7), 1).await.unwrap(), 0);
    assert_eq!(s.prune_audit(us, Duration::days(7), 1).await.unwrap(), 3);
    let left = entries_after(&s, 0).await;
    let actions: Vec<&str> = left.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(left[0].id, kept);
    assert_eq!(actions[1..], ["token.create", "audit.prune"], "{actions:?}");
    // The prune left an entry saying what it took, and as whom.
    let pruned = &left[2];
    assert_eq!(pruned.target.id, "us");
    assert_eq!(pruned.after.as_ref().unwrap()["deleted"], 3);
    assert_eq!(pruned.actor, ops());
    assert_eq!(s.prune_audit(us, Duration::days(7), 1).await.unwrap(), 0);
    // The entries of no region are an operator's to prune.
    assert_eq!(
        s.prune_audit(AuditScope::Shared, Duration::days(7), 1)
            .await
            .unwrap(),
        1
    );
}
