//! What a sender reads right before each request (`send_target`, and
//! `send_targets` for many at once), and the health check (`ping`).

use super::*;
use remit::store::{Destinations, Schedule, Upkeep};

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
    let secrets: Vec<&str> = target.secrets_at(t0()).collect();
    assert_eq!(secrets, ["whsec_abc"]);
    assert_eq!(target.signing_secrets[0].expires_at, None);
    assert_eq!(target.pause_left, None, "never paused");
    assert_eq!(
        Some(&target.destination),
        s.destination(&signed).await.unwrap().as_ref(),
        "the same destination `destination` reads"
    );
    assert!(target.destination.enabled && target.destination.has_signing_secret);
    assert_eq!(target.destination.url.as_str(), "https://hooks.example/in");

    let unsigned = s.send_target(&plain).await.unwrap().unwrap();
    assert!(unsigned.signing_secrets.is_empty());
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

pub async fn many_send_targets_answer_as_one_does_in_order<H: Harness>(h: &H) {
    let s = h.store();
    let a = destination(h, "a", Region::US).await;
    let b = destination(h, "b", Region::US).await;
    s.pause_destination(&b, Duration::seconds(90))
        .await
        .unwrap();
    let ghost = DestinationId::new("ghost").unwrap();
    let asked = [b.clone(), ghost, a.clone(), b.clone()];

    let many = s.send_targets(&asked).await.unwrap();
    let mut one_by_one = Vec::new();
    for id in &asked {
        one_by_one.push(s.send_target(id).await.unwrap());
    }
    assert_eq!(many, one_by_one);
    assert_eq!(
        many[1], None,
        "an unknown destination answers None in its place"
    );
    assert_eq!(
        many[0].as_ref().unwrap().pause_left,
        Some(Duration::seconds(90))
    );
    assert_eq!(many[2].as_ref().unwrap().destination.id, a);
    assert!(s.send_targets(&[]).await.unwrap().is_empty());
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
