//! Rotating the payload key end to end: a runtime with the ring NEW,OLD
//! delivers while `remit rekey` re-seals everything under NEW; then a
//! process with NEW alone starts (the old key is forgotten) and delivers
//! the rest with the right bytes, and one with OLD alone is refused.

use std::collections::BTreeSet;
use std::time::Duration;

use base64::Engine as _;
use remit::domain::{Region, TaskState};
use remit::payload_crypto::PayloadKey;
use remit::store::Keys;

use super::{remit, run, terminate};
use crate::support::{self, Receiver, Reply, TestDb};

const TASKS: usize = 80;

#[actix_rt::test]
async fn rekey_while_a_runtime_delivers_then_drop_the_old_key() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    receiver.script(
        "/hook",
        vec![],
        Reply::ok().delayed(Duration::from_millis(40)),
    );
    let old = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
    let new = PayloadKey::generate_base64();
    let ring = format!("{new},{old}");

    // Everything so far is sealed under the old key (the test store's).
    db.store.check_payload_key().await.unwrap();
    let secret = remit_actors::signature::generate_secret();
    let crm = support::destination(
        &db,
        "crm",
        Region::EU,
        &receiver.url("/hook"),
        Some(&secret),
    )
    .await;
    let mut tasks = Vec::new();
    for n in 0..TASKS {
        tasks.push(support::task(&db, &format!("r{n}"), &crm, Region::EU).await);
    }

    let with_ring = |command: &mut std::process::Command| {
        command
            .env_remove("REMIT_PAYLOAD_KEY")
            .env("REMIT_PAYLOAD_KEYS", &ring);
    };
    let mut first = remit(&db);
    with_ring(first.args(["run", "--region", "eu"]));
    let first = first
        .env("REMIT_THROTTLE__DEFAULT__MAX_IN_FLIGHT", "2")
        .spawn()
        .unwrap();
    receiver
        .wait_until(Duration::from_secs(15), "deliveries under way", |r| {
            r.len() >= 5
        })
        .await;

    let mut rekey = remit(&db);
    with_ring(rekey.args(["rekey", "--batch", "7"]));
    let out = String::from_utf8(run(&mut rekey).stdout).unwrap();
    let under_way = receiver.requests().len();
    assert!(
        under_way < TASKS,
        "the rekey ran while deliveries went on ({under_way} of {TASKS} delivered)"
    );
    assert!(out.contains("nothing is left under an older key"), "{out}");
    let old_fingerprint = PayloadKey::from_bytes([7u8; 32]).fingerprint_hex();
    assert!(
        out.contains(&format!("key {old_fingerprint} seals nothing")),
        "{out}"
    );
    assert_eq!(terminate(first).await.code(), Some(0));

    let mut status = remit(&db);
    with_ring(status.args(["status", "--format", "json"]));
    let report: serde_json::Value = serde_json::from_slice(&run(&mut status).stdout).unwrap();
    let sealed = report["sealed_by_key"].as_array().unwrap();
    assert_eq!(sealed.len(), 1, "{report}");
    assert_eq!(
        sealed[0]["fingerprint"],
        PayloadKey::from_base64(&new).unwrap().fingerprint_hex()
    );
    assert_eq!(sealed[0]["payloads"], TASKS);
    assert_eq!(sealed[0]["secrets"], 1);

    // The old key alone is refused, naming what it lacks.
    let refused = remit(&db).args(["run", "--region", "eu"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    let new_fingerprint = PayloadKey::from_base64(&new).unwrap().fingerprint_hex();
    assert!(stderr.contains(&new_fingerprint), "{stderr}");
    assert!(!stderr.contains(&new) && !stderr.contains(&old), "{stderr}");

    // The new key alone delivers the rest, with the same bytes and a
    // signature made with the secret, which opened too.
    let second = remit(&db)
        .env("REMIT_PAYLOAD_KEY", &new)
        .args(["run", "--region", "eu"])
        .spawn()
        .unwrap();
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(30)).await;
    assert_eq!(terminate(second).await.code(), Some(0));
    let bodies: BTreeSet<String> = receiver
        .requests()
        .iter()
        .map(|r| String::from_utf8(r.body.clone()).unwrap())
        .collect();
    let expected: BTreeSet<String> = (0..TASKS)
        .map(|n| format!(r#"{{"reminder":"r{n}"}}"#))
        .collect();
    assert_eq!(bodies, expected);
    let last = receiver.requests().pop().unwrap();
    assert_eq!(
        crate::support::standard_webhooks::verify(&[(&secret, &last)]),
        [Ok(())]
    );
}
