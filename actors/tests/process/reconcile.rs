//! `remit reconcile` as cron runs it: what it reports and its exit codes,
//! expired leases handed back, and a database it cannot reach.

use remit::store::{Leases, Schedule};
use std::process::Command;

use remit::domain::TaskState;

use crate::remit;
use crate::support::{self, TestDb};

#[actix_rt::test]
async fn reconcile_reports_for_cron_and_hands_expired_leases_back() {
    use remit::store::ClaimRequest;
    let db = TestDb::with_database_clock().await;
    let dest = support::destination(
        &db,
        "crm",
        remit::domain::Region::US,
        "http://127.0.0.1:9/",
        None,
    )
    .await;
    let stuck = support::task(&db, "stuck", &dest, remit::domain::Region::US).await;
    // A consumer that claimed with a tiny lease and vanished.
    let claimed = db
        .store
        .claim_due(&ClaimRequest {
            region: remit::domain::Region::US,
            lease_owner: "us-gone".into(),
            lease: chrono::Duration::milliseconds(1),
            limit: 1,
            per_destination_cap: 1,
            caps: Vec::new(),
            skip: Vec::new(),
            resume_after: None,
        })
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    let ledger = std::env::temp_dir().join(format!("remit-ledger-{}.csv", uuid::Uuid::new_v4()));
    let due = db
        .store
        .task(stuck)
        .await
        .unwrap()
        .unwrap()
        .not_before
        .to_rfc3339();
    std::fs::write(
        &ledger,
        format!(
            "tenant_id,reminder_id,due\nclinic-1,stuck,{due}\nclinic-1,never-scheduled,{due}\n"
        ),
    )
    .unwrap();

    let output = remit(&db)
        .args([
            "reconcile",
            "--region",
            "us",
            "--format",
            "json",
            "--ledger",
        ])
        .arg(&ledger)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "findings exit 1 so cron alerts"
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["clean"], false);
    assert_eq!(report["expired_leases"]["count"], 1);
    assert_eq!(
        report["expired_leases"]["tasks"][0]["lease_owner"],
        "us-gone"
    );
    assert_eq!(
        report["missing_from_schedule"][0]["reminder_id"],
        "never-scheduled"
    );

    let output = remit(&db)
        .args(["reconcile", "--region", "us", "--reclaim"])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("expired leases handed back: 1"), "{text}");
    assert_eq!(
        db.store.task(stuck).await.unwrap().unwrap().state,
        TaskState::RetryWait
    );

    std::fs::write(
        &ledger,
        format!("tenant_id,reminder_id,due\nclinic-1,stuck,{due}\n"),
    )
    .unwrap();
    let output = remit(&db)
        .args(["reconcile", "--ledger"])
        .arg(&ledger)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(String::from_utf8(output.stdout)
        .unwrap()
        .contains("all well"));

    std::fs::write(&ledger, "tenant_id,reminder_id,due\nclinic-1,x,yesterday\n").unwrap();
    let output = remit(&db)
        .args(["reconcile", "--ledger"])
        .arg(&ledger)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("line 2"));
    let _ = std::fs::remove_file(&ledger);
}

#[test]
fn reconcile_that_cannot_reach_the_database_exits_3() {
    let output = Command::new(env!("CARGO_BIN_EXE_remit"))
        .env_clear()
        .env("DATABASE_URL", "postgres://postgres@127.0.0.1:1/nowhere")
        .args(["reconcile"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
