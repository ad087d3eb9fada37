//! Reconciliation against the source of truth's ledger of expected
//! reminders.

use remit::domain::{LedgerEntry, ReminderId, TenantId};
use remit::store::{Schedule, Upkeep};

use super::*;

async fn task_due<H: Harness>(h: &H, reminder: &str, d: &DestinationId, at: Duration) -> TaskId {
    let mut new = new_task(reminder, d, Region::US);
    new.not_before = t0() + at;
    h.store().schedule(new).await.unwrap().task.id
}

fn entry(reminder: &str, at: Duration) -> LedgerEntry {
    LedgerEntry {
        tenant_id: TenantId::new("clinic-1").unwrap(),
        reminder_id: ReminderId::new(reminder).unwrap(),
        due: t0() + at,
    }
}

pub async fn reconcile_compares_the_schedule_with_a_ledger<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let elsewhere = destination(h, "crm-eu", Region::EU).await;
    task_due(h, "known", &d, Duration::hours(1)).await;
    let stray = task_due(h, "stray", &d, Duration::hours(2)).await;
    task_due(h, "later", &d, Duration::hours(10)).await;
    let mut abroad = new_task("abroad", &elsewhere, Region::EU);
    abroad.not_before = t0() + Duration::hours(2);
    s.schedule(abroad).await.unwrap();

    let ledger = vec![
        entry("known", Duration::hours(1)),
        entry("never", Duration::hours(3)),
    ];
    let request = ReconcileRequest {
        region: Some(Region::US),
        older_than: Duration::minutes(15),
        reclaim: false,
        ledger: Some(ledger),
        list_limit: 10,
    };
    let report = s.reconcile(&request).await.unwrap();
    assert_eq!(
        report.missing_from_schedule,
        vec![entry("never", Duration::hours(3))],
        "a ledger entry with no task"
    );
    assert_eq!(
        report.unknown_to_ledger.count, 1,
        "only the task due inside the ledger's span, in the region asked"
    );
    let named: Vec<_> = report
        .unknown_to_ledger
        .tasks
        .iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(named, vec![stray]);
    assert_eq!(
        report.unknown_to_ledger.tasks[0].reminder_id.as_str(),
        "stray"
    );
    assert!(!report.is_clean());

    let without = ReconcileRequest {
        ledger: Some(Vec::new()),
        ..request
    };
    let report = s.reconcile(&without).await.unwrap();
    assert!(report.missing_from_schedule.is_empty());
    assert_eq!(report.unknown_to_ledger.count, 0, "an empty ledger is none");
}
