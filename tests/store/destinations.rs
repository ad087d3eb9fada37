//! Destinations: registration and the shared pause after a 429.

use remit::domain::{DestinationId, NewDestination, Region};
use remit::store::{Destinations, StoreError};

use crate::support::{t0, TestDb};

#[tokio::test]
async fn registering_twice_is_a_repeat_and_other_settings_conflict() {
    let db = TestDb::new().await;
    let id = DestinationId::new("crm").unwrap();
    let new = |url: &str, secret: Option<&str>| {
        NewDestination::new(id.clone(), Region::EU, url, secret.map(str::to_owned)).unwrap()
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
        db.store
            .send_target(&id)
            .await
            .unwrap()
            .map(|t| t.secrets_at(t0()).map(str::to_owned).collect::<Vec<_>>()),
        Some(vec!["whsec_x".to_owned()])
    );
}

#[tokio::test]
async fn a_disabled_destination_is_skipped() {
    let db = TestDb::new().await;
    let off = db.destination("off", Region::US).await;
    db.task("o1", &off, Region::US).await;
    db.execute("UPDATE destinations SET enabled = false WHERE id = 'off'")
        .await;
    assert!(db.claim(Region::US, "us-1", 10).await.is_empty());
}
