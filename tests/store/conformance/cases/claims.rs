//! Claims: deadlines, reclaiming expired leases, caps and round-robin,
//! regions, skipped destinations, turns over destinations and tenants.

use remit::domain::TenantId;
use remit::store::{Leases, ResumePoint, Schedule};

use super::*;

pub async fn claims_respect_deadlines_and_available_at<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task(h, "r1", &d, Region::US).await;
    h.clock().set(t0() - Duration::milliseconds(1));
    assert!(s
        .claim_due(&claim(Region::US, "c", 5))
        .await
        .unwrap()
        .is_empty());
    h.clock().set(t0());
    let c = s
        .claim_due(&claim(Region::US, "c", 5))
        .await
        .unwrap()
        .remove(0);
    let next = t0() + Duration::seconds(90);
    let outcome = s
        .finish(
            &c.lease(),
            &c.task.destination_id,
            &retry_at(h.clock(), next, record(429)),
        )
        .await
        .unwrap();
    assert_eq!(outcome, TransitionOutcome::Applied);
    h.clock().set(next - Duration::milliseconds(1));
    assert!(s
        .claim_due(&claim(Region::US, "c", 5))
        .await
        .unwrap()
        .is_empty());
    h.clock().set(next);
    let again = s.claim_due(&claim(Region::US, "c", 5)).await.unwrap();
    assert_eq!(
        (again.len(), again[0].task.id, again[0].task.attempt_count),
        (1, id, 2)
    );
}

pub async fn an_expired_lease_is_reclaimed_and_logged<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::EU).await;
    let id = task(h, "r1", &d, Region::EU).await;
    let old = s
        .claim_due(&claim(Region::EU, "old", 5))
        .await
        .unwrap()
        .remove(0);
    h.clock().advance(Duration::seconds(29));
    assert!(s
        .claim_due(&claim(Region::EU, "new", 5))
        .await
        .unwrap()
        .is_empty());
    h.clock().advance(Duration::seconds(1));
    let new = s
        .claim_due(&claim(Region::EU, "new", 5))
        .await
        .unwrap()
        .remove(0);
    assert!(new.reclaimed && new.lease_token > old.lease_token);
    assert_eq!(new.task.idempotency_key, old.task.idempotency_key);
    let log = s.attempts(id).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0].outcome, log[0].lease_owner.as_str()),
        (AttemptOutcome::Abandoned, "old")
    );
}

/// Defence in depth: a leased row whose lease ended before its deadline
/// (which no transition writes, but a hand edit or an older import could)
/// is not reclaimed, and so not sent, until `not_before`; nor does it take
/// a destination's turn from one whose work is due.
pub async fn an_expired_lease_is_not_reclaimed_before_its_deadline<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    let id = task(h, "r1", &crm, Region::US).await;
    let old = s
        .claim_due(&claim(Region::US, "old", 5))
        .await
        .unwrap()
        .remove(0);
    let deadline = t0() + Duration::hours(2);
    h.move_deadline(id, deadline).await;
    let erp = destination(h, "erp", Region::US).await;
    let due = task(h, "r2", &erp, Region::US).await;

    // The lease ran out long ago; the deadline is ahead. With room for one
    // row, the claim passes over crm (first in turn) to erp's due row.
    h.clock().set(t0() + Duration::hours(1));
    let claimed = s.claim_due(&claim(Region::US, "new", 1)).await.unwrap();
    assert_eq!(claimed.iter().map(|c| c.task.id).collect::<Vec<_>>(), [due]);
    s.finish(
        &claimed[0].lease(),
        &claimed[0].task.destination_id,
        &delivered(record(200)),
    )
    .await
    .unwrap();
    h.clock().set(deadline - Duration::milliseconds(1));
    assert!(s
        .claim_due(&claim(Region::US, "new", 5))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        s.task(id).await.unwrap().unwrap().lease_owner.as_deref(),
        Some("old")
    );

    h.clock().set(deadline);
    let new = s
        .claim_due(&claim(Region::US, "new", 5))
        .await
        .unwrap()
        .remove(0);
    assert_eq!(new.task.id, id);
    assert!(new.reclaimed && new.lease_token > old.lease_token);
    assert_eq!(new.task.attempt_count, 2);
}

pub async fn claims_are_capped_and_round_robin<H: Harness>(h: &H) {
    let s = h.store();
    let busy = destination(h, "busy", Region::US).await;
    for i in 0..30 {
        task(h, &format!("b{i}"), &busy, Region::US).await;
    }
    for name in ["q1", "q2"] {
        let d = destination(h, name, Region::US).await;
        for i in 0..3 {
            task(h, &format!("{name}-{i}"), &d, Region::US).await;
        }
    }
    let mut request = claim(Region::US, "c", 8);
    request.per_destination_cap = 4;
    let claimed = s.claim_due(&request).await.unwrap();
    assert_eq!(claimed.len(), 8);
    let from_busy = claimed
        .iter()
        .filter(|c| c.task.destination_id == busy)
        .count();
    assert!(from_busy <= 4, "{from_busy} from one destination");
    let destinations: std::collections::HashSet<_> = claimed
        .iter()
        .map(|c| c.task.destination_id.clone())
        .collect();
    assert_eq!(destinations.len(), 3);
}

/// A destination with a cap of its own (a slow rate's) takes no more than
/// it in a claim, and the claim's cap still bounds one that names a larger
/// cap; the rest of the claim goes to the others.
pub async fn a_destination_takes_no_more_than_its_own_cap<H: Harness>(h: &H) {
    let s = h.store();
    let slow = destination(h, "slow", Region::US).await;
    let fast = destination(h, "fast", Region::US).await;
    for i in 0..10 {
        task(h, &format!("s{i}"), &slow, Region::US).await;
        task(h, &format!("f{i}"), &fast, Region::US).await;
    }
    let mut request = claim(Region::US, "c", 10);
    request.per_destination_cap = 4;
    request.caps = vec![(slow.clone(), 2), (fast.clone(), 9)];
    let claimed = s.claim_due(&request).await.unwrap();
    let count = |d: &DestinationId| {
        claimed
            .iter()
            .filter(|c| &c.task.destination_id == d)
            .count()
    };
    assert_eq!(count(&slow), 2, "its own cap");
    assert_eq!(count(&fast), 4, "the claim's cap, lower than the one named");

    // Without a cap of its own it takes its share again.
    request.caps.clear();
    let claimed = s.claim_due(&request).await.unwrap();
    let count = |d: &DestinationId| {
        claimed
            .iter()
            .filter(|c| &c.task.destination_id == d)
            .count()
    };
    assert_eq!((count(&slow), count(&fast)), (4, 4));
}

pub async fn regions_are_isolated<H: Harness>(h: &H) {
    let s = h.store();
    let us = destination(h, "us", Region::US).await;
    let eu = destination(h, "eu", Region::EU).await;
    task(h, "u", &us, Region::US).await;
    task(h, "e", &eu, Region::EU).await;
    let claimed = s.claim_due(&claim(Region::EU, "c", 10)).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.region, Region::EU);
}

pub async fn a_claim_skips_the_destinations_it_names<H: Harness>(h: &H) {
    let s = h.store();
    let busy = destination(h, "busy", Region::US).await;
    let free = destination(h, "free", Region::US).await;
    task(h, "b1", &busy, Region::US).await;
    task(h, "f1", &free, Region::US).await;
    let mut request = claim(Region::US, "c", 5);
    request.skip = vec![busy.clone()];
    let claimed = s.claim_due(&request).await.unwrap();
    assert_eq!(
        claimed
            .iter()
            .map(|c| c.task.destination_id.clone())
            .collect::<Vec<_>>(),
        [free]
    );
    let claimed = s.claim_due(&claim(Region::US, "c", 5)).await.unwrap();
    assert_eq!(claimed.len(), 1, "left for a claim that does not skip it");
    assert_eq!(claimed[0].task.destination_id, busy);
}

pub async fn claims_take_turns_over_the_destinations<H: Harness>(h: &H) {
    let s = h.store();
    let mut names = Vec::new();
    for name in ["a", "b", "c"] {
        let d = destination(h, name, Region::US).await;
        for i in 0..3 {
            task(h, &format!("{name}-{i}"), &d, Region::US).await;
        }
        names.push(d);
    }
    let mut request = claim(Region::US, "c", 1);
    let mut order = Vec::new();
    for _ in 0..4 {
        let claimed = s.claim_due(&request).await.unwrap();
        assert_eq!(claimed.len(), 1);
        order.push(claimed[0].task.destination_id.to_string());
        request.resume_after = request.resume_point(&claimed);
    }
    assert_eq!(order, ["a", "b", "c", "a"], "each claim resumes the turn");

    // A claim that reaches past the end wraps round, and resumes after the
    // last destination it reached on the second lap.
    request.limit = 2;
    request.per_destination_cap = 1;
    request.resume_after = Some(ResumePoint {
        destination: names[1].clone(),
        tenant: TenantId::new("clinic-1").unwrap(),
    });
    let claimed = s.claim_due(&request).await.unwrap();
    let mut got: Vec<_> = claimed
        .iter()
        .map(|c| c.task.destination_id.to_string())
        .collect();
    got.sort();
    assert_eq!(got, ["a", "c"]);
    assert_eq!(
        request.resume_point(&claimed).map(|p| p.destination),
        Some(names[0].clone())
    );
    assert_eq!(request.resume_point(&[]), None, "nothing found: start over");
}

/// Schedules `n` tasks of `tenant` at `d`, the `i`th due `i` ms after `from`
/// (distinct times, so every store takes a tenant's rows in one order).
async fn tenant_tasks<H: Harness>(
    h: &H,
    tenant: &str,
    n: usize,
    d: &DestinationId,
    from: chrono::DateTime<chrono::Utc>,
) {
    for i in 0..n {
        let mut new = new_task(&format!("{tenant}-{i}"), d, Region::US);
        new.tenant_id = TenantId::new(tenant).unwrap();
        new.not_before = from + Duration::milliseconds(i as i64);
        h.store().schedule(new).await.unwrap();
    }
}

fn reminders(claimed: &[remit::domain::ClaimedTask]) -> Vec<String> {
    let mut got: Vec<_> = claimed
        .iter()
        .map(|c| c.task.reminder_id.as_str().to_owned())
        .collect();
    got.sort();
    got
}

pub async fn tenants_take_turns_within_a_destination<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    // The large tenant's rows are the oldest; the small ones come later.
    tenant_tasks(h, "a", 10, &d, t0()).await;
    tenant_tasks(h, "b", 2, &d, t0() + Duration::seconds(1)).await;
    tenant_tasks(h, "c", 3, &d, t0() + Duration::seconds(2)).await;
    // Live but not due: never taken.
    tenant_tasks(h, "later", 3, &d, t0() + Duration::hours(2)).await;
    h.clock().set(t0() + Duration::minutes(1));

    // Every tenant's oldest, then every tenant's second oldest.
    let first = s.claim_due(&claim(Region::US, "c", 6)).await.unwrap();
    assert_eq!(
        reminders(&first),
        ["a-0", "a-1", "b-0", "b-1", "c-0", "c-1"],
        "the share split between the tenants in turns"
    );
    // A tenant with too few rows leaves its room to the others.
    let second = s.claim_due(&claim(Region::US, "c", 6)).await.unwrap();
    assert_eq!(
        reminders(&second),
        ["a-2", "a-3", "a-4", "a-5", "a-6", "c-2"]
    );

    // More tenants with work than the share has rows: they take turns
    // from claim to claim, after the last tenant the previous one reached.
    let e = destination(h, "erp", Region::US).await;
    for tenant in ["x", "y", "z"] {
        tenant_tasks(h, tenant, 2, &e, t0()).await;
    }
    let mut request = claim(Region::US, "c", 2);
    request.skip = vec![d];
    let mut order = Vec::new();
    for _ in 0..3 {
        let claimed = s.claim_due(&request).await.unwrap();
        let mut tenants: Vec<_> = claimed
            .iter()
            .map(|c| c.task.tenant_id.to_string())
            .collect();
        tenants.sort();
        order.push(tenants.join(","));
        request.resume_after = request.resume_point(&claimed);
    }
    assert_eq!(
        order,
        ["x,y", "x,z", "y,z"],
        "each claim resumes the tenants' turn"
    );
}
