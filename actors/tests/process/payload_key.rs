//! A process started with another payload key than the one the database's
//! payloads are sealed with is refused before it seals anything.

use base64::Engine as _;
use remit::domain::Region;
use remit::payload_crypto::PayloadKey;

use super::{remit, run, schedule_in_2030};
use crate::support::{self, Backend, TestDb};

#[actix_rt::test]
async fn another_payload_key_is_refused_on_postgres() {
    another_key_is_refused(Backend::Postgres).await;
}

#[actix_rt::test]
async fn another_payload_key_is_refused_on_sqlite() {
    another_key_is_refused(Backend::Sqlite).await;
}

async fn another_key_is_refused(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    support::destination(&db, "crm", Region::US, "http://127.0.0.1:9/", None).await;
    let schedule = |reminder: &str| {
        let mut command = schedule_in_2030(&db, "us", reminder);
        command.args(["--payload", "{}"]);
        command
    };
    // The first process to seal records its key.
    run(&mut schedule("r1"));

    let other = base64::engine::general_purpose::STANDARD.encode([9u8; 32]);
    let sealed_with = PayloadKey::from_bytes([7u8; 32]).fingerprint_hex();
    let configured = PayloadKey::from_bytes([9u8; 32]).fingerprint_hex();
    for command in [
        schedule("r2").env("REMIT_PAYLOAD_KEY", &other),
        remit(&db)
            .args(["run", "--region", "us"])
            .env("REMIT_PAYLOAD_KEY", &other),
    ] {
        let started = std::time::Instant::now();
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&sealed_with) && stderr.contains(&configured),
            "names both fingerprints: {stderr}"
        );
        assert!(started.elapsed() < remit_testkit::db::FAILS_FAST);
    }
    assert_eq!(
        db.count("SELECT count(*) AS n FROM tasks").await,
        1,
        "nothing was scheduled under the other key"
    );
    // The right key still schedules.
    run(&mut schedule("r3"));
}
