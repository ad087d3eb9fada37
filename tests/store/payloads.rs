//! Payloads are encrypted at rest, apart from the envelope.

use remit::domain::{Region, TaskState};
use remit::payload_crypto::{PayloadCryptoError, PayloadKey};
use remit::store::{Store, StoreError};

use crate::support::{new_task, TestDb};

#[tokio::test]
async fn round_trip_through_the_database() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::US).await;
    let new = new_task("r1", &dest, Region::US);
    let task = db.store.schedule(new.clone()).await.unwrap().task;
    assert_eq!(db.store.payload(&task).await.unwrap(), new.payload);
}

#[tokio::test]
async fn the_database_never_holds_the_plaintext() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::US).await;
    db.store
        .schedule(new_task("r1", &dest, Region::US))
        .await
        .unwrap();
    // The body contains "1970-01-01": no column of any table shows it,
    // as text or as raw bytes.
    for table in ["payloads", "tasks", "attempts", "destinations"] {
        let hits = db
            .count(&format!(
                "SELECT count(*) AS n FROM {table} t WHERE position('1970-01-01' in t::text) > 0"
            ))
            .await;
        assert_eq!(hits, 0, "plaintext found in {table}");
    }
    let raw = db
        .count(
            "SELECT count(*) AS n FROM payloads
             WHERE position(convert_to('1970-01-01', 'UTF8') in ciphertext) > 0
                OR position(convert_to('reminder', 'UTF8') in ciphertext) > 0",
        )
        .await;
    assert_eq!(raw, 0, "the ciphertext column holds the body in the clear");
    assert_eq!(db.count("SELECT count(*) AS n FROM payloads").await, 1);
}

#[tokio::test]
async fn a_wrong_key_is_a_clear_error() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::US).await;
    let task = db
        .store
        .schedule(new_task("r1", &dest, Region::US))
        .await
        .unwrap()
        .task;
    assert_eq!(task.state, TaskState::Pending);
    let other = db.another_store(PayloadKey::from_bytes([9; 32])).await;
    let err = other.payload(&task).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Payload(PayloadCryptoError::WrongKey { .. })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("another key"), "{err}");
}
