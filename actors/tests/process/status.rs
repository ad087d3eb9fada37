//! `remit status` as an operator runs it: no runtime, either store.

use remit::domain::{AttemptRecord, FailureReason, Region};
use remit::store::{ClaimRequest, Leases};

use crate::support::{self, delivered, Backend, TestDb};

#[actix_rt::test]
async fn status_reads_the_database_alone_on_postgres() {
    reads_the_database_alone(Backend::Postgres).await;
}

#[actix_rt::test]
async fn status_reads_the_database_alone_on_sqlite() {
    reads_the_database_alone(Backend::Sqlite).await;
}

async fn reads_the_database_alone(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let dest = support::destination(&db, "crm", Region::US, "http://127.0.0.1:9/", None).await;
    for n in 0..3 {
        support::task(&db, &format!("r{n}"), &dest, Region::US).await;
    }
    let claimed = db
        .store
        .claim_due(&ClaimRequest {
            region: Region::US,
            lease_owner: "us-1".into(),
            lease: chrono::Duration::seconds(30),
            limit: 2,
            per_destination_cap: 2,
            caps: Vec::new(),
            skip: Vec::new(),
            resume_after: None,
        })
        .await
        .unwrap();
    db.store
        .finish(
            &claimed[0].lease(),
            &claimed[0].task.destination_id,
            &delivered(AttemptRecord::default()),
        )
        .await
        .unwrap();
    db.store
        .fail(
            &claimed[1].lease(),
            &FailureReason::Status(410),
            &AttemptRecord::default(),
        )
        .await
        .unwrap();

    let json = crate::run(crate::remit(&db).args(["status", "--format", "json"]));
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let us = &report["regions"][0];
    assert_eq!(us["region"], "us");
    assert_eq!(
        (us["pending"].as_i64(), us["delivered"].as_i64()),
        (Some(1), Some(1))
    );
    // Whether a commit waits for a standby: the shared server has none.
    match backend {
        Backend::Postgres => {
            let replication = &report["replication"];
            assert_eq!(replication["in_recovery"], false, "{replication}");
            assert_eq!(replication["synchronous"], serde_json::json!([]));
            assert!(replication["summary"].is_string(), "{replication}");
        }
        Backend::Sqlite => assert!(report["replication"].is_null()),
    }
    assert_eq!(
        report["failures_last_day_by_destination"],
        serde_json::json!([{"destination": "crm", "tasks": 1}])
    );
    assert!(us["oldest_eligible_seconds"].as_f64().is_some());
    assert_eq!(report["deadline_to_delivery_last_hour"]["delivered"], 1);

    let text = crate::run(crate::remit(&db).args(["status", "--region", "us"]));
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("region  pending"), "{text}");
    assert!(text.contains("\nReplication: "), "{text}");
    let by_destination = text
        .split("Failed in the last day, by destination")
        .nth(1)
        .unwrap_or_else(|| panic!("no failures by destination: {text}"));
    assert!(
        by_destination
            .lines()
            .any(|l| l.split_whitespace().eq(["crm", "1"])),
        "{text}"
    );
    assert!(
        text.contains("Deadline to delivery, last hour: p50"),
        "{text}"
    );
    for debug in ["Some(", "None"] {
        assert!(!text.contains(debug), "debug text reached a person: {text}");
    }
}
