//! A destination's deletion: hidden from every read, refused for
//! scheduling, its tasks never claimed, its id registered again clean;
//! and export, import and rekey carrying the settings and header rows.

use base64::Engine as _;
use remit::domain::{DestinationChange, Setting};
use remit::payload_crypto::PayloadKey;
use remit::store::{Destinations, JobAction, Jobs, Keys, Leases, Schedule, Transfer};

use super::destination_settings::{cancel_job, headers, plain, secret, send_headers, TOKEN};
use super::*;

pub async fn a_missing_or_deleted_destination_is_not_changed<H: Harness>(h: &H) {
    let s = h.store();
    let ghost = DestinationId::new("ghost").unwrap();
    let change = DestinationChange {
        burst: Setting::Set(2),
        ..DestinationChange::default()
    };
    assert!(matches!(
        s.update_destination(&ghost, change.clone()).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        s.delete_destination(&ghost, None).await,
        Err(StoreError::NotFound { .. })
    ));
    let crm = destination(h, "crm", Region::US).await;
    let deleted = s.delete_destination(&crm, None).await.unwrap();
    assert_eq!(deleted.live_tasks, 0);
    assert_eq!(deleted.cancel_job, None);
    assert_eq!(deleted.destination.id, crm);
    assert!(matches!(
        s.update_destination(&crm, change).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        s.delete_destination(&crm, None).await,
        Err(StoreError::NotFound { .. })
    ));
    // Hidden from every read and every operator's call.
    assert_eq!(s.destination(&crm).await.unwrap(), None);
    assert_eq!(s.send_target(&crm).await.unwrap(), None);
    for refused in [
        s.pause_destination(&crm, Duration::minutes(1)).await.err(),
        s.signing_secrets(&crm).await.err(),
        s.disable_destination(&crm, None).await.err(),
        s.enable_destination(&crm).await.err(),
    ] {
        assert!(
            matches!(refused, Some(StoreError::NotFound { .. })),
            "{refused:?}"
        );
    }
    assert_eq!(s.destination(&crm).await.unwrap(), None, "still deleted");
}

pub async fn a_destination_with_live_tasks_is_deleted_only_with_them<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    let other = destination(h, "other", Region::US).await;
    // One ends (delivered); one stays pending; the other destination's
    // task is scheduled later, so the claim takes this one first.
    task(h, "done", &crm, Region::US).await;
    let held = claim_one(h).await;
    s.finish(&held.lease(), &crm, &delivered(record(200)))
        .await
        .unwrap();
    let live = task(h, "live", &crm, Region::US).await;
    task(h, "elsewhere", &other, Region::US).await;

    match s.delete_destination(&crm, None).await.unwrap_err() {
        StoreError::InUse { what, why, .. } => {
            assert_eq!(what, "destination");
            assert!(why.contains("1 of its tasks"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        s.destination(&crm).await.unwrap().is_some(),
        "nothing changed"
    );

    // A bad cancel job writes nothing either.
    let mut bad = cancel_job(&crm);
    bad.filter.reason = Some("max_attempts".into());
    assert!(matches!(
        s.delete_destination(&crm, Some(bad)).await,
        Err(StoreError::Invalid(_))
    ));
    assert!(s.destination(&crm).await.unwrap().is_some());

    let deleted = s
        .delete_destination(&crm, Some(cancel_job(&crm)))
        .await
        .unwrap();
    assert_eq!(deleted.live_tasks, 1);
    let job = deleted.cancel_job.expect("the cancel job");
    assert_eq!(job.action, JobAction::Cancel);
    assert_eq!(job.filter.destination.as_ref(), Some(&crm));
    assert_eq!(s.job(job.id).await.unwrap(), Some(job.clone()));
    assert_eq!(s.destination(&crm).await.unwrap(), None);

    // No claim takes its tasks meanwhile; the other destination's go on.
    h.clock().advance(Duration::hours(1));
    let claimed = s.claim_due(&claim(Region::US, "c", 10)).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.destination_id, other);
    // The job cancels the live task; the ended one keeps its history.
    s.advance_job(job.id, 10).await.unwrap();
    let t = s.task(live).await.unwrap().unwrap();
    assert_eq!(t.state, TaskState::Cancelled);

    // Scheduling to it is refused as to a missing destination.
    for (reminder, d) in [
        ("after", &crm),
        ("ghost", &DestinationId::new("ghost").unwrap()),
    ] {
        match s
            .schedule(new_task(reminder, d, Region::US))
            .await
            .unwrap_err()
        {
            StoreError::Invalid(e) => {
                assert_eq!(e.field, "destination_id");
                assert!(e.reason.contains("no destination"), "{}", e.reason);
            }
            other => panic!("{reminder}: {other:?}"),
        }
    }
}

pub async fn a_deleted_id_registered_again_comes_back_clean<H: Harness>(h: &H) {
    let s = h.store();
    let crm = DestinationId::new("crm").unwrap();
    let new = |region, secret: Option<&str>| {
        NewDestination::new(
            crm.clone(),
            region,
            "https://hooks.example/in",
            secret.map(Into::into),
        )
        .unwrap()
    };
    s.add_destination(new(Region::US, Some("whsec_old_secret_value_123456")))
        .await
        .unwrap();
    let change = DestinationChange {
        rate_per_second: Setting::Set(3.0),
        late_after_seconds: Setting::Set(30),
        headers: Some(vec![secret(0, "authorization", Some(TOKEN))]),
        ..DestinationChange::default()
    };
    s.update_destination(&crm, change).await.unwrap();
    s.disable_destination(&crm, Some("by hand".into()))
        .await
        .unwrap();
    s.delete_destination(&crm, None).await.unwrap();

    match s.add_destination(new(Region::EU, None)).await.unwrap_err() {
        StoreError::Conflict { differs, .. } => assert_eq!(differs, "region"),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.destination(&crm).await.unwrap(), None, "still deleted");

    let back = s.add_destination(new(Region::US, None)).await.unwrap();
    assert!(back.enabled, "{back:?}");
    assert!(!back.has_signing_secret, "no old secret");
    assert!(back.settings.is_default(), "{:?}", back.settings);
    assert_eq!(back.health.disabled_reason, None);
    assert_eq!(s.destination(&crm).await.unwrap().unwrap(), back);
    assert!(s.signing_secrets(&crm).await.unwrap().is_empty());
    let target = s.send_target(&crm).await.unwrap().unwrap();
    assert!(target.signing_secrets.is_empty());
    assert!(target.destination.settings.headers.is_empty());
    // And it takes tasks again.
    s.schedule(new_task("again", &crm, Region::US))
        .await
        .unwrap();
    // Registered again the same way: a repeat.
    assert_eq!(
        s.add_destination(new(Region::US, None)).await.unwrap(),
        back
    );
}

pub async fn an_export_carries_settings_headers_and_tombstones<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    let gone = destination(h, "gone", Region::US).await;
    let ended = task(h, "ended", &gone, Region::US).await;
    let held = claim_one(h).await;
    s.finish(&held.lease(), &gone, &delivered(record(200)))
        .await
        .unwrap();
    s.delete_destination(&gone, None).await.unwrap();
    let change = DestinationChange {
        max_in_flight: Setting::Set(2),
        timeout_ms: Setting::Set(900),
        retry_horizon_seconds: Setting::Set(7200),
        headers: Some(vec![
            plain(0, "x-tenant", "clinic-a"),
            secret(1, "authorization", Some(TOKEN)),
        ]),
        ..DestinationChange::default()
    };
    let changed = s.update_destination(&crm, change).await.unwrap();

    let exported = s.export_destinations().await.unwrap();
    assert_eq!(exported.len(), 2, "the tombstone too");
    let record = exported.iter().find(|r| r.destination.id == crm).unwrap();
    assert_eq!(record.destination, changed);
    assert_eq!(record.headers.len(), 2);
    assert!(
        record.headers[1].key_fingerprint().is_some(),
        "still sealed"
    );
    assert!(exported
        .iter()
        .any(|r| r.destination.id == gone && r.deleted_at.is_some()));

    let other = h.another_empty().await;
    let o = other.store();
    o.import_destinations(exported.clone()).await.unwrap();
    let tasks = o
        .import_tasks(s.export_tasks(None, 10).await.unwrap())
        .await;
    assert_eq!(
        tasks.unwrap().added,
        1,
        "the ended task keeps its destination"
    );
    assert_eq!(o.destination(&crm).await.unwrap().unwrap(), changed);
    assert_eq!(o.destination(&gone).await.unwrap(), None, "still deleted");
    assert!(o.task(ended).await.unwrap().is_some());
    assert_eq!(
        send_headers(&other, &crm).await,
        vec![
            ("x-tenant".to_owned(), Some("clinic-a".to_owned())),
            ("authorization".to_owned(), Some(TOKEN.to_owned())),
        ]
    );
    assert_eq!(o.export_destinations().await.unwrap(), exported);
    // Again: a repeat.
    let again = o.import_destinations(exported.clone()).await.unwrap();
    assert_eq!((again.added, again.already), (0, 2));

    // A record whose settings or headers a change would refuse is refused
    // the same way, naming the field, and nothing is written.
    let third = h.another_empty().await;
    let mut bad_burst = record.clone();
    bad_burst.destination.settings.burst = Some(0);
    let mut reserved = record.clone();
    reserved.headers[0].name = "webhook-signature".into();
    for (bad, field) in [(bad_burst, "burst"), (reserved, "headers[0].name")] {
        match third
            .store()
            .import_destinations(vec![bad])
            .await
            .unwrap_err()
        {
            StoreError::Invalid(e) => assert_eq!(e.field, field),
            other => panic!("{other:?}"),
        }
    }
    assert!(third
        .store()
        .export_destinations()
        .await
        .unwrap()
        .is_empty());
}

fn ring(bytes: &[u8]) -> PayloadKey {
    let texts: Vec<String> = bytes
        .iter()
        .map(|b| base64::engine::general_purpose::STANDARD.encode([*b; 32]))
        .collect();
    PayloadKey::ring(texts.iter().map(String::as_str)).unwrap()
}

pub async fn a_rekey_reseals_secret_headers<H: Harness>(h: &H) {
    let old = h.with_key(ring(&[1])).await;
    old.check_payload_key().await.unwrap();
    let crm = destination(h, "crm", Region::US).await;
    let change = headers(vec![
        plain(0, "x-tenant", "clinic-a"),
        secret(1, "authorization", Some(TOKEN)),
    ]);
    old.update_destination(&crm, change).await.unwrap();
    let counts = old.sealed_counts().await.unwrap();
    assert_eq!(counts.len(), 1);
    assert_eq!(
        (counts[0].payloads, counts[0].secrets),
        (0, 1),
        "{counts:?}"
    );

    let both = h.with_key(ring(&[2, 1])).await;
    both.check_payload_key().await.unwrap();
    assert!(
        both.forget_unused_keys().await.unwrap().is_empty(),
        "the old key still seals a header"
    );
    let done = both.rekey_batch(None, 10).await.unwrap();
    assert_eq!(done.secrets, 1);
    let counts = both.sealed_counts().await.unwrap();
    assert_eq!(counts.len(), 1);
    assert_eq!(counts[0].fingerprint, ring(&[2]).fingerprint_hex());
    assert_eq!(both.forget_unused_keys().await.unwrap().len(), 1);
    let new_only = h.with_key(ring(&[2])).await;
    new_only.check_payload_key().await.unwrap();
    let target = new_only.send_target(&crm).await.unwrap().unwrap();
    assert_eq!(
        target.destination.settings.headers[1].value.known(),
        Some(TOKEN),
        "opened with the new key alone"
    );
}
