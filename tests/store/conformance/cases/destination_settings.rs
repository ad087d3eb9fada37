//! An operator's change of a destination and its deletion: each setting
//! kept, reset or set; headers replaced as a whole, a secret kept when
//! given without its value and never shown back; a deleted destination
//! hidden from every read, refused for scheduling, its tasks never
//! claimed, and its id registered again clean; export, import and rekey
//! carry the settings and the header rows.

use base64::Engine as _;
use remit::domain::{CustomHeader, DestinationChange, HeaderValue, Setting};
use remit::payload_crypto::PayloadKey;
use remit::store::console::{JobAction, NewReplayJob, ReplayFilter};
use remit::store::{Destinations, Keys, ReplayJobs, Transfer};

use super::*;

const TOKEN: &str = "Bearer 0123456789abcdef-secret";

fn plain(i: usize, name: &str, value: &str) -> CustomHeader {
    CustomHeader::new(i, name, Some(value.into()), false).unwrap()
}

fn secret(i: usize, name: &str, value: Option<&str>) -> CustomHeader {
    CustomHeader::new(i, name, value.map(Into::into), true).unwrap()
}

fn headers(list: Vec<CustomHeader>) -> DestinationChange {
    DestinationChange {
        headers: Some(list),
        ..DestinationChange::default()
    }
}

fn cancel_job(d: &DestinationId) -> NewReplayJob {
    NewReplayJob {
        region: Region::US,
        action: JobAction::Cancel,
        filter: ReplayFilter {
            destination: Some(d.clone()),
            ..ReplayFilter::default()
        },
        requested_by: "tok_ops".into(),
        horizon: Duration::hours(6),
    }
}

/// The headers' names and what each shows: a plain value, or a secret's
/// hint (never its value).
fn shown(list: &[CustomHeader]) -> Vec<(String, String)> {
    list.iter()
        .map(|h| {
            let v = match &h.value {
                HeaderValue::Plain(v) => format!("plain {v}"),
                HeaderValue::Secret { value, hint } => {
                    assert_eq!(value, &None, "a secret's value is never shown");
                    format!("secret {hint:?}")
                }
            };
            (h.name.clone(), v)
        })
        .collect()
}

async fn send_headers<H: Harness>(h: &H, d: &DestinationId) -> Vec<(String, Option<String>)> {
    let target = h.store().send_target(d).await.unwrap().expect("a target");
    target
        .destination
        .settings
        .headers
        .iter()
        .map(|h| (h.name.clone(), h.value.known().map(str::to_owned)))
        .collect()
}

pub async fn a_change_keeps_resets_or_sets_each_setting<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    let set = DestinationChange {
        rate_per_second: Setting::Set(2.5),
        burst: Setting::Set(4),
        max_in_flight: Setting::Set(3),
        timeout_ms: Setting::Set(1500),
        max_attempts: Setting::Set(7),
        retry_horizon_seconds: Setting::Set(3600),
        late_after_seconds: Setting::Set(60),
        disable_after_failures: Setting::Set(9),
        ..DestinationChange::default()
    };
    let changed = s.update_destination(&crm, set).await.unwrap();
    let st = &changed.settings;
    assert_eq!(st.rate_per_second, Some(2.5));
    assert_eq!((st.burst, st.max_in_flight), (Some(4), Some(3)));
    assert_eq!((st.timeout_ms, st.max_attempts), (Some(1500), Some(7)));
    assert_eq!(st.retry_horizon_seconds, Some(3600));
    assert_eq!(st.late_after_seconds, Some(60));
    assert_eq!(changed.health.overrides.failures, Some(9));
    assert_eq!(
        s.destination(&crm).await.unwrap().unwrap(),
        changed,
        "as read"
    );

    // Keep what is not named; reset one, set another.
    let partly = DestinationChange {
        burst: Setting::Reset,
        timeout_ms: Setting::Set(2000),
        ..DestinationChange::default()
    };
    let changed = s.update_destination(&crm, partly).await.unwrap();
    let st = &changed.settings;
    assert_eq!(st.burst, None, "reset to the runtime's value");
    assert_eq!(st.timeout_ms, Some(2000));
    assert_eq!(st.rate_per_second, Some(2.5), "kept");
    assert_eq!(st.max_attempts, Some(7), "kept");
    assert_eq!(changed.health.overrides.failures, Some(9), "kept");
    assert_eq!(s.destination(&crm).await.unwrap().unwrap(), changed);

    // An empty change changes nothing; a bad one names its field and
    // writes nothing.
    let same = s
        .update_destination(&crm, DestinationChange::default())
        .await
        .unwrap();
    assert_eq!(same, changed);
    let bad = DestinationChange {
        rate_per_second: Setting::Set(5.0),
        timeout_ms: Setting::Set(5),
        ..DestinationChange::default()
    };
    match s.update_destination(&crm, bad).await.unwrap_err() {
        StoreError::Invalid(e) => assert_eq!(e.field, "timeout_ms"),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.destination(&crm).await.unwrap().unwrap(), changed);
}

pub async fn a_change_of_url_is_read_and_sent_to<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    let url = url::Url::parse("https://hooks.example/v2/in").unwrap();
    let change = DestinationChange {
        url: Some(url.clone()),
        ..DestinationChange::default()
    };
    assert_eq!(s.update_destination(&crm, change).await.unwrap().url, url);
    assert_eq!(s.destination(&crm).await.unwrap().unwrap().url, url);
    let target = s.send_target(&crm).await.unwrap().unwrap();
    assert_eq!(target.destination.url, url);
}

pub async fn headers_are_replaced_whole_and_secrets_never_shown<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    let first = headers(vec![
        plain(0, "X-Tenant", "clinic-a"),
        secret(1, "Authorization", Some(TOKEN)),
        secret(2, "x-short", Some("abc")),
    ]);
    let changed = s.update_destination(&crm, first).await.unwrap();
    let expected = vec![
        ("x-tenant".to_owned(), "plain clinic-a".to_owned()),
        (
            "authorization".to_owned(),
            "secret Some(\"cret\")".to_owned(),
        ),
        ("x-short".to_owned(), "secret None".to_owned()),
    ];
    assert_eq!(shown(&changed.settings.headers), expected, "in order");
    let read = s.destination(&crm).await.unwrap().unwrap();
    assert_eq!(shown(&read.settings.headers), expected);
    assert_eq!(
        send_headers(h, &crm).await,
        vec![
            ("x-tenant".to_owned(), Some("clinic-a".to_owned())),
            ("authorization".to_owned(), Some(TOKEN.to_owned())),
            ("x-short".to_owned(), Some("abc".to_owned())),
        ],
        "a send opens the secrets"
    );

    // Replaced as a whole, in the new order: a secret given without its
    // value keeps the one stored; a header left out is gone.
    let second = headers(vec![
        secret(0, "authorization", None),
        plain(1, "x-region", "us"),
    ]);
    let changed = s.update_destination(&crm, second).await.unwrap();
    assert_eq!(
        shown(&changed.settings.headers),
        vec![
            (
                "authorization".to_owned(),
                "secret Some(\"cret\")".to_owned()
            ),
            ("x-region".to_owned(), "plain us".to_owned()),
        ]
    );
    assert_eq!(
        send_headers(h, &crm).await,
        vec![
            ("authorization".to_owned(), Some(TOKEN.to_owned())),
            ("x-region".to_owned(), Some("us".to_owned())),
        ]
    );

    // A secret without a value and none stored under its name (a plain
    // one is not kept as a secret) is refused, naming it; nothing changes.
    for (i, name) in [(1, "x-region"), (1, "x-new")] {
        let asked = headers(vec![plain(0, "x-a", "1"), secret(i, name, None)]);
        match s.update_destination(&crm, asked).await.unwrap_err() {
            StoreError::Invalid(e) => assert_eq!(e.field, "headers[1].value", "{name}"),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(s.destination(&crm).await.unwrap().unwrap(), changed);

    // A change without headers keeps them; an empty list drops them.
    let other = DestinationChange {
        burst: Setting::Set(2),
        ..DestinationChange::default()
    };
    let kept = s.update_destination(&crm, other).await.unwrap();
    assert_eq!(kept.settings.headers, changed.settings.headers);
    let dropped = s
        .update_destination(&crm, headers(Vec::new()))
        .await
        .unwrap();
    assert!(dropped.settings.headers.is_empty());
    assert!(send_headers(h, &crm).await.is_empty());
}

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
    assert_eq!(s.replay_job(job.id).await.unwrap(), Some(job.clone()));
    assert_eq!(s.destination(&crm).await.unwrap(), None);

    // No claim takes its tasks meanwhile; the other destination's go on.
    h.clock().advance(Duration::hours(1));
    let claimed = s.claim_due(&claim(Region::US, "c", 10)).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.destination_id, other);
    // The job cancels the live task; the ended one keeps its history.
    s.advance_replay_job(job.id, 10).await.unwrap();
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
