//! Reconciliation finds stuck work and reminders missing from the schedule.

use chrono::Duration;
use remit::domain::{
    AttemptOutcome, AttemptRecord, FailureReason, LedgerEntry, ReconcileRequest, Region,
    ReminderId, TaskState, TenantId,
};
use remit::store::{Leases, Schedule, Upkeep};

use crate::support::{delivered, new_task, t0, TestDb};

fn request(reclaim: bool, ledger: Option<Vec<LedgerEntry>>) -> ReconcileRequest {
    ReconcileRequest {
        region: Some(Region::US),
        older_than: Duration::minutes(15),
        reclaim,
        ledger,
        list_limit: 100,
    }
}

fn entry(reminder: &str) -> LedgerEntry {
    LedgerEntry {
        tenant_id: TenantId::new("clinic-1").unwrap(),
        reminder_id: ReminderId::new(reminder).unwrap(),
        due: t0(),
    }
}

#[tokio::test]
async fn every_finding_is_reported_and_expired_leases_can_be_handed_back() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::US).await;
    let eu = db.destination("eu-crm", Region::EU).await;
    let leased = db.task("leased", &dest, Region::US).await;
    let c = db.claim(Region::US, "us-1", 1).await.remove(0);
    assert_eq!(c.task.id, leased);
    for (reminder, finish) in [("delivered", true), ("failed", false)] {
        db.task(reminder, &dest, Region::US).await;
        let c = db.claim(Region::US, "us-1", 1).await.remove(0);
        let record = AttemptRecord::default();
        if finish {
            db.store
                .finish(
                    &c.lease(),
                    &c.task.destination_id,
                    &delivered(record.clone()),
                )
                .await
                .unwrap();
        } else {
            db.store
                .fail(&c.lease(), &FailureReason::Status(410), &record)
                .await
                .unwrap();
        }
    }
    let waiting = db.task("waiting", &dest, Region::US).await;
    let mut short = new_task("short-horizon", &dest, Region::US);
    short.retry_horizon = Duration::minutes(30);
    let short = db.store.schedule(short).await.unwrap().task.id;
    db.task("eu-only", &eu, Region::EU).await;

    db.clock().advance(Duration::hours(1));
    let ledger = vec![entry("waiting"), entry("ghost")];
    let report = db
        .store
        .reconcile(&request(false, Some(ledger.clone())))
        .await
        .unwrap();

    assert_eq!(report.expired_leases.count, 1);
    assert_eq!(report.expired_leases.tasks[0].id, leased);
    assert_eq!(
        report.expired_leases.tasks[0].lease_owner.as_deref(),
        Some("us-1")
    );
    assert_eq!(report.reclaimed, 0);
    let old: Vec<_> = report.old_eligible.tasks.iter().map(|t| t.id).collect();
    assert_eq!(old.len(), 2);
    assert!(old.contains(&waiting) && old.contains(&short));
    assert_eq!(report.past_horizon.count, 1);
    assert_eq!(report.past_horizon.tasks[0].id, short);
    assert_eq!(
        report.terminal,
        vec![("delivered".to_owned(), 1), ("http_410".to_owned(), 1)]
    );
    assert_eq!(report.missing_from_schedule, vec![entry("ghost")]);
    // Due within the ledger's span, in this region, and not listed.
    assert_eq!(report.unknown_to_ledger.count, 4);
    assert!(!report.is_clean());

    // Handing the expired lease back makes it due at once and logs why.
    let report = db.store.reconcile(&request(true, None)).await.unwrap();
    assert_eq!(report.reclaimed, 1);
    let task = db.store.task(leased).await.unwrap().unwrap();
    assert_eq!(task.state, TaskState::RetryWait);
    let log = db.store.attempts(leased).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].outcome, AttemptOutcome::Abandoned);
    assert_eq!(log[0].lease_owner, "us-1");
    assert_eq!(
        db.store
            .reconcile(&request(false, None))
            .await
            .unwrap()
            .expired_leases
            .count,
        0
    );
}

#[tokio::test]
async fn a_healthy_schedule_is_clean() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::US).await;
    db.task("fresh", &dest, Region::US).await;
    let report = db
        .store
        .reconcile(&request(false, Some(vec![entry("fresh")])))
        .await
        .unwrap();
    assert!(report.is_clean(), "{report:?}");
}
