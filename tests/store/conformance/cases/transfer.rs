//! Export and import: a schedule exported in pages and imported into an
//! empty store comes out of it unchanged, every task continuing where it
//! was; importing it again changes nothing; an import with a record that
//! breaks a rule or conflicts writes nothing at all.

use remit::domain::{OrderingKey, TraceParent};
use remit::store::{
    DestinationRecord, Destinations, Imported, Keys, Leases, Rates, Schedule, TaskRecord, Transfer,
};

use super::*;
use crate::support::test_key;

/// Every task of `store`, read in pages of two.
async fn export_all<S: Transfer>(store: &S) -> Vec<TaskRecord> {
    let mut all: Vec<TaskRecord> = Vec::new();
    loop {
        let after = all.last().map(|r| r.task.id);
        let page = store.export_tasks(after, 2).await.unwrap();
        if page.is_empty() {
            return all;
        }
        all.extend(page);
    }
}

async fn claim_us<H: Harness>(h: &H) -> remit::domain::ClaimedTask {
    h.store()
        .claim_due(&claim(Region::US, "c", 1))
        .await
        .unwrap()
        .remove(0)
}

pub async fn an_export_imports_into_an_empty_store_unchanged<H: Harness>(h: &H) {
    let s = h.store();
    let crm = DestinationId::new("crm").unwrap();
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    s.add_destination(
        NewDestination::new(
            crm.clone(),
            Region::US,
            "https://hooks.example/in",
            Some(secret.into()),
        )
        .unwrap(),
    )
    .await
    .unwrap();
    let sms = destination(h, "sms", Region::EU).await;
    s.pause_destination(&sms, Duration::minutes(5))
        .await
        .unwrap();
    s.take_tokens(&crm, 10.0, 5, 2).await.unwrap();

    task(h, "delivered", &crm, Region::US).await;
    let c = claim_us(h).await;
    s.finish(&c.lease(), &crm, &delivered(record(200)))
        .await
        .unwrap();
    task(h, "failed", &crm, Region::US).await;
    let c = claim_us(h).await;
    s.fail(&c.lease(), &FailureReason::Status(410), &record(410))
        .await
        .unwrap();
    let leased = task(h, "leased", &crm, Region::US).await;
    let lease = claim_us(h).await.lease();
    assert_eq!(lease.task_id, leased);
    let mut traced = new_task("traced", &crm, Region::US);
    traced.traceparent = Some(TraceParent::new(0x4bf9_2f35_77b3_4da6, 7, 1).unwrap());
    traced.ordering_key = Some(OrderingKey::new("patient-1").unwrap());
    let traced = s.schedule(traced).await.unwrap().task;
    task(h, "eu", &sms, Region::EU).await;

    let destinations = s.export_destinations().await.unwrap();
    assert_eq!(
        destinations
            .iter()
            .map(|d| d.destination.id.as_str())
            .collect::<Vec<_>>(),
        vec!["crm", "sms"]
    );
    let tasks = export_all(s).await;
    assert_eq!(tasks.len(), 5);

    let copy = h.another_empty().await;
    let t = copy.store();
    assert_eq!(
        t.import_destinations(destinations.clone()).await.unwrap(),
        Imported {
            added: 2,
            already: 0
        }
    );
    assert_eq!(
        t.import_tasks(tasks.clone()).await.unwrap(),
        Imported {
            added: 5,
            already: 0
        }
    );
    assert_eq!(
        t.import_destinations(destinations.clone()).await.unwrap(),
        Imported {
            added: 0,
            already: 2
        },
        "a repeated import changes nothing"
    );
    assert_eq!(
        t.import_tasks(tasks.clone()).await.unwrap(),
        Imported {
            added: 0,
            already: 5
        }
    );
    assert_eq!(t.export_destinations().await.unwrap(), destinations);
    assert_eq!(export_all(t).await, tasks, "every task as it was");

    assert_eq!(
        t.payload(&traced).await.unwrap(),
        s.payload(&traced).await.unwrap()
    );
    let target = t.send_target(&crm).await.unwrap().unwrap();
    assert_eq!(target.signing_secrets[0].secret, secret);
    assert_eq!(
        t.record_payload_key().await.unwrap(),
        vec![test_key().fingerprint().to_vec()],
        "the key the payloads came sealed with is recorded"
    );

    // The lease is honoured until it expires, then reclaimed under a
    // token that outranks every imported one.
    copy.clock().advance(Duration::hours(1));
    let claimed = t.claim_due(&claim(Region::US, "copy", 10)).await.unwrap();
    let reclaimed = claimed
        .iter()
        .find(|c| c.task.id == leased)
        .expect("the expired lease is reclaimed");
    assert!(reclaimed.lease().token > lease.token);
    assert_eq!(reclaimed.lease().attempt, lease.attempt + 1);
}

pub async fn an_import_that_breaks_a_rule_or_conflicts_writes_nothing<H: Harness>(h: &H) {
    let s = h.store();
    destination(h, "aaa", Region::US).await;
    let crm = destination(h, "crm", Region::US).await;
    task(h, "a", &crm, Region::US).await;
    task(h, "b", &crm, Region::US).await;
    let destinations = s.export_destinations().await.unwrap();
    let tasks = export_all(s).await;

    let copy = h.another_empty().await;
    let t = copy.store();
    let other_url =
        NewDestination::new(crm.clone(), Region::US, "https://elsewhere.example/", None).unwrap();
    t.add_destination(other_url).await.unwrap();
    match t.import_destinations(destinations.clone()).await {
        Err(StoreError::Conflict { differs, .. }) => assert_eq!(differs, "url"),
        other => panic!("expected a conflict on the url, got {other:?}"),
    }
    let held: Vec<DestinationRecord> = t.export_destinations().await.unwrap();
    assert_eq!(held.len(), 1, "the destination before it is not written");

    // Reminder `b` is another task here (imported under another id):
    // `a`, before it, is not written.
    let mut other_b = tasks[1].clone();
    assert_eq!(other_b.task.reminder_id.as_str(), "b");
    other_b.task.id = TaskId(uuid::Uuid::from_u128(
        0x0190_0000_0000_7000_8000_0000_0000_0b0b,
    ));
    other_b.task.payload_ref = uuid::Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0b0c);
    t.import_tasks(vec![other_b.clone()]).await.unwrap();
    match t.import_tasks(tasks.clone()).await {
        Err(StoreError::Conflict { differs, .. }) => assert_eq!(differs, "id"),
        other => panic!("expected a conflict on the id, got {other:?}"),
    }
    let mut broken = tasks[0].clone();
    broken.task.state = TaskState::Failed;
    match t.import_tasks(vec![broken]).await {
        Err(StoreError::Invalid(e)) => assert_eq!(e.field, "finalized_at"),
        other => panic!("expected a refusal naming finalized_at, got {other:?}"),
    }
    let ids: Vec<TaskId> = export_all(t).await.iter().map(|r| r.task.id).collect();
    assert_eq!(
        ids,
        vec![other_b.task.id],
        "nothing of either import is written"
    );

    // An id that is one task's (`a`'s) and a (tenant, reminder) that is
    // another's (`b`'s): every store names the reminder.
    t.import_tasks(vec![tasks[0].clone()]).await.unwrap();
    let mut crossed = other_b.clone();
    crossed.task.id = tasks[0].task.id;
    crossed.task.payload_ref = uuid::Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0b0d);
    match t.import_tasks(vec![crossed]).await {
        Err(StoreError::Conflict { differs, .. }) => assert_eq!(differs, "id"),
        other => panic!("expected the reminder named, got {other:?}"),
    }
}
