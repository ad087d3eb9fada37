//! When a claim could next find work: what the Claimer sleeps until.

use super::*;
use crate::support::new_task;
use remit::store::{Destinations, Leases, Schedule};

async fn task_due<H: Harness>(h: &H, reminder: &str, d: &DestinationId, due: Duration) -> TaskId {
    let mut new = new_task(reminder, d, Region::US);
    new.not_before = t0() + due;
    h.store().schedule(new).await.unwrap().task.id
}

pub async fn next_due_follows_deadlines_leases_pauses_and_regions<H: Harness>(h: &H) {
    let s = h.store();
    h.clock().set(t0());
    assert_eq!(s.next_due(Region::US).await.unwrap(), None, "no rows");

    let d = destination(h, "crm", Region::US).await;
    let eu = destination(h, "crm-eu", Region::EU).await;
    let mut early_eu = new_task("eu", &eu, Region::EU);
    early_eu.not_before = t0() + Duration::seconds(5);
    s.schedule(early_eu).await.unwrap();
    task_due(h, "later", &d, Duration::seconds(120)).await;
    task_due(h, "sooner", &d, Duration::milliseconds(90_250)).await;
    assert_eq!(
        s.next_due(Region::US).await.unwrap(),
        Some(Duration::milliseconds(90_250)),
        "the region's earliest deadline, not another region's"
    );

    h.clock().set(t0() + Duration::seconds(100));
    assert_eq!(
        s.next_due(Region::US).await.unwrap(),
        Some(Duration::seconds(20)),
        "a row due already was left out by the claim that asks: the next one counts"
    );

    let claimed = s.claim_due(&claim(Region::US, "c", 5)).await.unwrap();
    assert_eq!(claimed.len(), 1, "only the sooner task is due");
    assert_eq!(
        s.next_due(Region::US).await.unwrap(),
        Some(Duration::seconds(20)),
        "the later deadline comes before the lease (30 s) runs out"
    );
    h.clock().set(t0() + Duration::seconds(120));
    let claimed = s.claim_due(&claim(Region::US, "c", 5)).await.unwrap();
    assert_eq!(claimed.len(), 1, "the later task");
    assert_eq!(
        s.next_due(Region::US).await.unwrap(),
        Some(Duration::seconds(10)),
        "the first lease (taken at 100 s) runs out at 130 s"
    );

    let until = s
        .pause_destination(&d, Duration::seconds(60))
        .await
        .unwrap();
    assert_eq!(until, t0() + Duration::seconds(180));
    assert_eq!(
        s.next_due(Region::US).await.unwrap(),
        Some(Duration::seconds(60)),
        "a paused destination's rows count from the pause's end"
    );

    s.disable_destination(&d, None).await.unwrap();
    assert_eq!(
        s.next_due(Region::US).await.unwrap(),
        None,
        "a disabled destination's rows wait for an operator, not a time"
    );
    assert_eq!(
        s.next_due(Region::EU).await.unwrap(),
        None,
        "the other region's row is long due: the idle backoff's business"
    );
}

/// A lease that ends before its deadline (a hand edit or an older import)
/// never makes the wait end before the deadline. (PostgreSQL does not look
/// for such a row among the leases at all, see `next_due.rs`, and leaves it
/// to the Claimer's idle poll.)
pub async fn next_due_never_precedes_a_deadline<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task_due(h, "r1", &d, Duration::zero()).await;
    h.clock().set(t0());
    assert_eq!(
        s.claim_due(&claim(Region::US, "c", 1)).await.unwrap().len(),
        1
    );
    h.move_deadline(id, t0() + Duration::seconds(300)).await;
    let wait = s.next_due(Region::US).await.unwrap();
    assert!(wait.is_none_or(|w| w == Duration::seconds(300)), "{wait:?}");
}
