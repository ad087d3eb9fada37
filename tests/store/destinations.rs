//! Destinations: registration and the shared pause after a 429.

use chrono::Duration;
use remit::domain::{DestinationId, NewDestination, Region};
use remit::store::{Store, StoreError};

use crate::support::{claim, t0, TestDb};

#[tokio::test]
async fn registering_twice_is_a_repeat_and_other_settings_conflict() {
    let db = TestDb::new().await;
    let id = DestinationId::new("crm").unwrap();
    let new = |url: &str, secret: Option<&str>| {
        NewDestination::new(id.clone(), Region::Eu, url, secret.map(str::to_owned)).unwrap()
    };
    let first = db
        .store
        .add_destination(new("https://a.example/h", Some("whsec_x")))
        .await
        .unwrap();
    assert!(first.has_signing_secret);
    let again = db
        .store
        .add_destination(new("https://a.example/h", Some("whsec_x")))
        .await
        .unwrap();
    assert_eq!(first, again);
    let err = db
        .store
        .add_destination(new("https://b.example/h", None))
        .await
        .unwrap_err();
    match err {
        StoreError::Conflict { differs, .. } => assert_eq!(differs, "url, secret"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        db.store.signing_secret(&id).await.unwrap().as_deref(),
        Some("whsec_x")
    );
}

#[tokio::test]
async fn a_paused_destination_is_skipped_until_the_pause_ends() {
    let db = TestDb::new().await;
    let held = db.destination("held", Region::Us).await;
    let free = db.destination("free", Region::Us).await;
    db.task("h1", &held, Region::Us).await;
    db.task("f1", &free, Region::Us).await;

    let until = t0() + Duration::seconds(120);
    assert_eq!(
        db.store.pause_destination(&held, until).await.unwrap(),
        until
    );
    // An earlier pause never shortens a later one.
    assert_eq!(
        db.store
            .pause_destination(&held, t0() + Duration::seconds(5))
            .await
            .unwrap(),
        until
    );

    let claimed = db
        .store
        .claim_due(&claim(Region::Us, "us-1", 10))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.destination_id, free);
    db.store
        .mark_delivered(&claimed[0].lease(), &Default::default())
        .await
        .unwrap();

    db.clock().set(until - Duration::milliseconds(1));
    assert!(db
        .store
        .claim_due(&claim(Region::Us, "us-1", 10))
        .await
        .unwrap()
        .is_empty());
    db.clock().set(until);
    let claimed = db
        .store
        .claim_due(&claim(Region::Us, "us-1", 10))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.destination_id, held);
}

#[tokio::test]
async fn a_disabled_destination_is_skipped() {
    let db = TestDb::new().await;
    let off = db.destination("off", Region::Us).await;
    db.task("o1", &off, Region::Us).await;
    db.execute("UPDATE destinations SET enabled = false WHERE id = 'off'")
        .await;
    assert!(db
        .store
        .claim_due(&claim(Region::Us, "us-1", 10))
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn pausing_an_unknown_destination_is_not_found() {
    let db = TestDb::new().await;
    let err = db
        .store
        .pause_destination(&DestinationId::new("ghost").unwrap(), t0())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::NotFound {
                what: "destination",
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn the_shared_bucket_grants_a_burst_then_the_rate() {
    use remit::store::Tokens;
    let db = TestDb::new().await;
    let id = db.destination("crm", Region::Us).await;
    // Two stores stand for two processes; both drain the same bucket.
    let other = db.another_store(crate::support::test_key()).await;
    assert_eq!(
        db.store.take_tokens(&id, 5.0, 3, 2).await.unwrap(),
        Tokens::Granted(2)
    );
    assert_eq!(
        other.take_tokens(&id, 5.0, 3, 2).await.unwrap(),
        Tokens::Granted(1)
    );
    assert_eq!(
        db.store.take_tokens(&id, 5.0, 3, 1).await.unwrap(),
        Tokens::WaitFor(std::time::Duration::from_millis(200))
    );
    db.clock().advance(Duration::milliseconds(400));
    assert_eq!(
        other.take_tokens(&id, 5.0, 3, 5).await.unwrap(),
        Tokens::Granted(2)
    );
    // Idle time refills only up to the burst.
    db.clock().advance(Duration::hours(1));
    assert_eq!(
        db.store.take_tokens(&id, 5.0, 3, 10).await.unwrap(),
        Tokens::Granted(3)
    );
}
