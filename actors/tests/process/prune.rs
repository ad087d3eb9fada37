//! `remit prune`: old terminal tasks go by hand, one region or all, the
//! default age from `retention.keep_days`, and the audit log's entries
//! older than `retention.audit_keep_days`; bad input exits 2 naming it.

use remit::domain::{AttemptRecord, Region, TaskId};
use remit::store::{Destinations, Leases, Schedule};

use crate::support::{self, TestDb};

/// A task delivered `days_ago` days ago (by the database's clock).
async fn delivered(db: &TestDb, reminder: &str, region: Region, days_ago: u32) -> TaskId {
    let destination = format!("crm-{region}");
    let dest = remit::domain::DestinationId::new(&destination).unwrap();
    if db.store.destination(&dest).await.unwrap().is_none() {
        support::destination(db, &destination, region, "http://127.0.0.1:9/", None).await;
    }
    let id = support::task(db, reminder, &dest, region).await;
    let claimed = db
        .store
        .claim_due(&support::db::claim(region, "elsewhere", 1))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    db.store
        .finish(
            &claimed[0].lease(),
            &claimed[0].task.destination_id,
            &support::db::delivered(AttemptRecord::default()),
        )
        .await
        .unwrap();
    db.execute(&format!(
        "UPDATE tasks SET finalized_at = finalized_at - interval '{days_ago} days', \
                          delivered_at = delivered_at - interval '{days_ago} days' \
         WHERE id = '{}'",
        id.0
    ))
    .await;
    id
}

async fn exists(db: &TestDb, id: TaskId) -> bool {
    db.store.task(id).await.unwrap().is_some()
}

#[actix_rt::test]
async fn prune_deletes_old_terminal_tasks_by_region_and_age() {
    let db = TestDb::with_database_clock().await;
    let old_us = delivered(&db, "old-us", Region::US, 40).await;
    let old_eu = delivered(&db, "old-eu", Region::EU, 40).await;
    let ten_days = delivered(&db, "ten-days", Region::US, 10).await;
    // The log only grows (an UPDATE is refused): an old entry is written old.
    for days in [400, 300] {
        db.execute(&format!(
            "INSERT INTO audit_log (at, actor_kind, action, target_kind, target_id) \
             VALUES (now() - interval '{days} days', 'system', 'rekey', 'payload_key', 'k')"
        ))
        .await;
    }
    let entries = "SELECT count(*) AS n FROM audit_log";
    let before = db.count(entries).await;

    let output = super::run(super::remit(&db).args(["prune", "--region", "us"]));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "pruned delivered and failed tasks that ended more than 30days ago, region us\n\
         deleted 1 task, 1 attempt and 1 payload in 1 batch\n\
         deleted 1 audit entry older than 365 days\n\
         deleted 0 hours of destination health that ended more than 7days ago\n"
    );
    assert_eq!(
        db.count(entries).await,
        before,
        "only the entry past a year went, and the prune left one of its own"
    );
    assert_eq!(
        db.count(
            "SELECT count(*) AS n FROM audit_log WHERE action = 'audit.prune' \
             AND actor_kind = 'cli' AND after->>'deleted' = '1'"
        )
        .await,
        1,
        "who pruned the log, and how much"
    );
    assert!(!exists(&db, old_us).await);
    assert!(exists(&db, old_eu).await, "another region");
    assert!(exists(&db, ten_days).await, "too young");

    // The default age follows the configuration, here from the environment;
    // every region is a batch of its own.
    let output = super::run(
        super::remit(&db)
            .env("REMIT_RETENTION__KEEP_DAYS", "5")
            .arg("prune"),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("more than 5days ago, every region")
            && stdout.contains("deleted 2 tasks, 2 attempts and 2 payloads in 2 batches"),
        "{stdout}"
    );
    assert_eq!(db.count("SELECT count(*) AS n FROM tasks").await, 0);

    let output = super::run(super::remit(&db).args(["prune", "--older-than", "1h"]));
    assert!(String::from_utf8_lossy(&output.stdout).contains("deleted 0 tasks"));
}

#[actix_rt::test]
async fn prune_refuses_bad_input_with_exit_2() {
    let db = TestDb::with_database_clock().await;
    let mut commands = Vec::new();
    for (arg, value, named) in [
        ("--region", "ap_south", "region"),
        ("--older-than", "soon", "--older-than"),
    ] {
        let mut command = super::remit(&db);
        command.args(["prune", arg, value]);
        commands.push((command, named));
    }
    for (key, named) in [
        ("REMIT_RETENTION__BATCH_SIZE", "retention.batch_size"),
        ("REMIT_RETENTION__KEEP_DAYS", "retention.keep_days"),
    ] {
        let mut command = super::remit(&db);
        command.arg("prune").env(key, "0");
        commands.push((command, named));
    }
    for (mut command, named) in commands {
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(
            stderr.contains(named),
            "{command:?} should name {named}: {stderr}"
        );
    }
}
