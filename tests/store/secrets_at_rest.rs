//! Signing secrets at rest: sealed with the payload key, the fingerprint
//! beside them; another key cannot open them and says so without the
//! value; a secret left in clear (from before secrets were sealed) is
//! sealed by the first process whose key passes the check.

use chrono::Duration;
use remit::domain::{DestinationId, NewDestination, Region, Rotation};
use remit::payload_crypto::PayloadKey;
use remit::store::{Destinations, Keys, Store, StoreError};

use crate::support::{t0, test_key, Backend, TestDb};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

fn hex_literal(backend: Backend, bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    match backend {
        Backend::Postgres => format!("'\\x{hex}'::bytea"),
        Backend::Sqlite => format!("x'{hex}'"),
    }
}

async fn signing(store: &impl Store, id: &DestinationId) -> Result<Vec<String>, StoreError> {
    let target = store.send_target(id).await?.unwrap();
    Ok(target.secrets_at(t0()).map(str::to_owned).collect())
}

async fn secrets_are_sealed_and_open_only_with_their_key(backend: Backend) {
    let db = TestDb::on(backend).await;
    let crm = DestinationId::new("crm").unwrap();
    let new = NewDestination::new(
        crm.clone(),
        Region::EU,
        "https://hooks.example/in",
        Some(SECRET.into()),
    )
    .unwrap();
    db.store.add_destination(new).await.unwrap();
    let rotation = Rotation::new(
        "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".into(),
        Some(t0() + Duration::hours(1)),
        t0(),
    )
    .unwrap();
    db.store.rotate_secret(&crm, rotation).await.unwrap();

    let fingerprint = hex_literal(backend, test_key().fingerprint());
    assert_eq!(
        db.count(&format!(
            "SELECT count(*) AS n FROM destination_secrets WHERE secret IS NULL \
             AND key_fingerprint = {fingerprint} AND nonce IS NOT NULL AND ciphertext IS NOT NULL"
        ))
        .await,
        2,
        "both sealed under the store's key, none in clear"
    );
    assert_eq!(
        signing(&db.store, &crm).await.unwrap(),
        ["whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", SECRET]
    );

    let other = db
        .another_store(PayloadKey::from_bytes([9; 32]))
        .await
        .with_clock(db.store.clock().clone());
    let refused = signing(&other, &crm).await.unwrap_err();
    assert!(
        matches!(refused, StoreError::Secret { ref destination, .. } if destination == "crm"),
        "{refused:?}"
    );
    let chain = remit_chain(&refused);
    assert!(chain.contains("another key"), "{chain}");
    assert!(!chain.contains("whsec_"), "{chain}");
}

/// The error with its causes, as a log line would show it.
fn remit_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

async fn a_secret_in_clear_is_sealed_at_the_key_check(backend: Backend) {
    let db = TestDb::on(backend).await;
    let crm = db.destination("crm", Region::EU).await;
    // What the migration leaves of the column secrets used to live in.
    let created = match backend {
        Backend::Postgres => format!("'{}'", t0().to_rfc3339()),
        Backend::Sqlite => t0().timestamp_micros().to_string(),
    };
    db.execute(&format!(
        "INSERT INTO destination_secrets (id, destination_id, secret, created_at) \
         VALUES ('legacy', 'crm', '{SECRET}', {created})"
    ))
    .await;
    assert_eq!(signing(&db.store, &crm).await.unwrap(), [SECRET], "usable");

    db.store.check_payload_key().await.unwrap();
    assert_eq!(
        db.count("SELECT count(*) AS n FROM destination_secrets WHERE secret IS NOT NULL")
            .await,
        0,
        "sealed"
    );
    assert_eq!(signing(&db.store, &crm).await.unwrap(), [SECRET]);
    assert_eq!(db.store.seal_clear_secrets().await.unwrap(), 0, "once");
}

#[tokio::test]
async fn postgres_secrets_are_sealed_and_open_only_with_their_key() {
    secrets_are_sealed_and_open_only_with_their_key(Backend::Postgres).await;
}

#[tokio::test]
async fn sqlite_secrets_are_sealed_and_open_only_with_their_key() {
    secrets_are_sealed_and_open_only_with_their_key(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_a_secret_in_clear_is_sealed_at_the_key_check() {
    a_secret_in_clear_is_sealed_at_the_key_check(Backend::Postgres).await;
}

#[tokio::test]
async fn sqlite_a_secret_in_clear_is_sealed_at_the_key_check() {
    a_secret_in_clear_is_sealed_at_the_key_check(Backend::Sqlite).await;
}
