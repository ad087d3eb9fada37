//! Payloads are encrypted at rest, apart from the envelope.

use remit::domain::{Region, TaskState};
use remit::payload_crypto::{PayloadCryptoError, PayloadKey};
use remit::store::{Keys, Schedule, StoreError};

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

/// Two processes that start at the same moment with different keys: one
/// records its key, the other is refused, never both recorded. Repeated,
/// since the race lies in who reads the empty record first.
#[tokio::test]
async fn two_processes_with_different_keys_never_both_record_theirs() {
    let db = TestDb::new().await;
    let one = db.another_store(PayloadKey::from_bytes([1; 32])).await;
    let other = db.another_store(PayloadKey::from_bytes([2; 32])).await;
    for round in 0..20 {
        db.execute("DELETE FROM payload_keys").await;
        let (a, b) = tokio::join!(one.check_payload_key(), other.check_payload_key());
        assert!(
            a.is_ok() != b.is_ok(),
            "round {round}: exactly one key is accepted ({a:?}, {b:?})"
        );
        assert!(matches!(
            a.err().or(b.err()),
            Some(StoreError::OtherPayloadKey { .. })
        ));
        assert_eq!(db.count("SELECT count(*) AS n FROM payload_keys").await, 1);
    }
}
