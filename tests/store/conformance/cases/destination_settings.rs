//! An operator's change of a destination: each setting kept, reset or
//! set; its URL; headers replaced as a whole, a secret kept when given
//! without its value and never shown back (its deletion, and export,
//! import and rekey, are `destination_deletion`).

use remit::domain::{CustomHeader, DestinationChange, HeaderValue, Setting};
use remit::store::{Destinations, JobAction, JobFilter, NewJob};

use super::*;

pub(super) const TOKEN: &str = "Bearer 0123456789abcdef-secret";

pub(super) fn plain(i: usize, name: &str, value: &str) -> CustomHeader {
    CustomHeader::new(i, name, Some(value.into()), false).unwrap()
}

pub(super) fn secret(i: usize, name: &str, value: Option<&str>) -> CustomHeader {
    CustomHeader::new(i, name, value.map(Into::into), true).unwrap()
}

pub(super) fn headers(list: Vec<CustomHeader>) -> DestinationChange {
    DestinationChange {
        headers: Some(list),
        ..DestinationChange::default()
    }
}

pub(super) fn cancel_job(d: &DestinationId) -> NewJob {
    NewJob {
        region: Region::US,
        action: JobAction::Cancel,
        filter: JobFilter {
            destination: Some(d.clone()),
            ..JobFilter::default()
        },
        requested_by: "tok_ops".into(),
        horizon: Duration::hours(6),
    }
}

/// The headers' names and what each shows: a plain value, or a secret's
/// hint (never its value).
pub(super) fn shown(list: &[CustomHeader]) -> Vec<(String, String)> {
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

pub(super) async fn send_headers<H: Harness>(
    h: &H,
    d: &DestinationId,
) -> Vec<(String, Option<String>)> {
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

/// A secret header never follows the URL to another origin: the change is
/// refused, naming the header and nothing written, unless the change gives
/// its value again or drops it. A new path on the same origin keeps it.
pub async fn a_secret_header_never_follows_the_url_to_another_origin<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    let before = s.destination(&crm).await.unwrap().unwrap().url;
    s.update_destination(
        &crm,
        headers(vec![
            plain(0, "X-Tenant", "clinic-a"),
            secret(1, "Authorization", Some(TOKEN)),
        ]),
    )
    .await
    .unwrap();
    let elsewhere = |url: &str| DestinationChange {
        url: Some(url::Url::parse(url).unwrap()),
        ..DestinationChange::default()
    };
    let refused = |result: Result<remit::domain::Destination, StoreError>| match result {
        Err(StoreError::Invalid(e)) => e,
        other => panic!("not refused: {other:?}"),
    };
    // The registered URL is http://127.0.0.1:9/: another host, scheme,
    // port.
    for url in [
        "http://attacker.example:9/in",
        "https://127.0.0.1:9/in",
        "http://127.0.0.1:10/in",
    ] {
        let e = refused(s.update_destination(&crm, elsewhere(url)).await);
        assert_eq!(e.field, "url", "{url}");
        assert!(
            e.reason.contains("\"authorization\""),
            "{url}: {}",
            e.reason
        );
        assert!(!e.reason.contains(TOKEN), "the value is never shown");
    }
    // A secret given without its value is the stored one: refused too.
    let mut keep = elsewhere("https://attacker.example/in");
    keep.headers = Some(vec![secret(0, "authorization", None)]);
    assert_eq!(refused(s.update_destination(&crm, keep).await).field, "url");
    // Nothing was written.
    let read = s.destination(&crm).await.unwrap().unwrap();
    assert_eq!(read.url, before);
    assert_eq!(
        send_headers(h, &crm).await,
        vec![
            ("x-tenant".to_owned(), Some("clinic-a".to_owned())),
            ("authorization".to_owned(), Some(TOKEN.to_owned())),
        ]
    );

    // Another path of the same origin keeps the secret.
    let same = before.join("/v2/in").unwrap();
    s.update_destination(&crm, elsewhere(same.as_str()))
        .await
        .unwrap();
    assert_eq!(send_headers(h, &crm).await.len(), 2);

    // Given again with the move, it goes to the new origin.
    let mut again = elsewhere("https://new.example/in");
    again.headers = Some(vec![secret(
        0,
        "Authorization",
        Some("Bearer new-receivers-own-token"),
    )]);
    s.update_destination(&crm, again).await.unwrap();
    assert_eq!(
        send_headers(h, &crm).await,
        vec![(
            "authorization".to_owned(),
            Some("Bearer new-receivers-own-token".to_owned())
        )]
    );
    // Left out, it is dropped, and the move goes through.
    let mut drop = elsewhere("https://other.example/in");
    drop.headers = Some(vec![plain(0, "X-Tenant", "clinic-a")]);
    let moved = s.update_destination(&crm, drop).await.unwrap();
    assert_eq!(moved.url.as_str(), "https://other.example/in");
    assert_eq!(
        send_headers(h, &crm).await,
        vec![("x-tenant".to_owned(), Some("clinic-a".to_owned()))]
    );
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
