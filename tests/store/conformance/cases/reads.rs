//! What a sender reads right before each request (`send_target`), and the
//! health check (`ping`).

use super::*;

pub async fn a_send_target_carries_the_secret_and_the_pause_left<H: Harness>(h: &H) {
    let s = h.store();
    let signed = DestinationId::new("signed").unwrap();
    let new = NewDestination::new(
        signed.clone(),
        Region::US,
        "https://hooks.example/in",
        Some("whsec_abc".into()),
    )
    .unwrap();
    s.add_destination(new).await.unwrap();
    let plain = destination(h, "plain", Region::US).await;

    let target = s.send_target(&signed).await.unwrap().unwrap();
    assert_eq!(target.signing_secret.as_deref(), Some("whsec_abc"));
    assert_eq!(target.pause_left, None, "never paused");
    assert_eq!(
        Some(&target.destination),
        s.destination(&signed).await.unwrap().as_ref(),
        "the same destination `destination` reads"
    );
    assert!(target.destination.enabled && target.destination.has_signing_secret);
    assert_eq!(target.destination.url.as_str(), "https://hooks.example/in");

    let unsigned = s.send_target(&plain).await.unwrap().unwrap();
    assert_eq!(unsigned.signing_secret, None);
    assert!(!unsigned.destination.has_signing_secret);

    s.pause_destination(&plain, Duration::seconds(90))
        .await
        .unwrap();
    h.clock().advance(Duration::seconds(30));
    let paused = s.send_target(&plain).await.unwrap().unwrap();
    assert_eq!(paused.pause_left, Some(Duration::seconds(60)));
    assert_eq!(
        paused.destination.paused_until,
        Some(t0() + Duration::seconds(90))
    );
    assert_eq!(
        s.send_target(&signed).await.unwrap().unwrap().pause_left,
        None,
        "a pause holds only its own destination"
    );
    h.clock().advance(Duration::seconds(61));
    assert_eq!(
        s.send_target(&plain).await.unwrap().unwrap().pause_left,
        None,
        "an ended pause leaves nothing"
    );

    let ghost = DestinationId::new("ghost").unwrap();
    assert_eq!(s.send_target(&ghost).await.unwrap(), None);
}

pub async fn ping_answers_and_changes_nothing<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task(h, "r1", &d, Region::US).await;
    let before = s.task(id).await.unwrap();
    assert!(matches!(s.ping().await, Ok(())));
    assert!(matches!(s.ping().await, Ok(())), "and again");
    assert_eq!(s.task(id).await.unwrap(), before);
}
