//! The alert check on destinations: a failure streak announced at each
//! level once and its recovery, a new streak announced again, and a
//! disabled destination never announced failing.

use remit::domain::{DestinationEvent, DisableOverrides, EventKind};
use remit::store::Destinations;
use serde_json::Value;

use super::alerts::{answer_all, check, checked, data};
use super::*;

pub async fn a_failing_destination_is_announced_at_each_level_once_then_recovered<H: Harness>(
    h: &H,
) {
    // Ten failures disable it; no time to wait.
    let crm = DestinationId::new("crm").unwrap();
    let new = NewDestination::new(crm.clone(), Region::US, "http://127.0.0.1:9/", None)
        .unwrap()
        .with_overrides(DisableOverrides::new(Some(0), Some(10)).unwrap());
    h.store().add_destination(new).await.unwrap();
    let c = check(true);
    let fail = |n: usize| async move {
        for _ in 0..n {
            let reminder = format!("r-{}", uuid::Uuid::new_v4());
            task(
                h,
                &reminder,
                &DestinationId::new("crm").unwrap(),
                Region::US,
            )
            .await;
        }
        h.clock().advance(Duration::seconds(1));
        answer_all(h, 500).await;
    };
    let streak = |events: &[DestinationEvent]| -> Vec<(EventKind, Value)> {
        events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Failing | EventKind::Recovered))
            .map(|e| (e.kind, data(e)))
            .collect()
    };

    fail(4).await;
    assert!(streak(&checked(h, &c).await.1).is_empty(), "40 %");
    fail(1).await;
    let at_half = streak(&checked(h, &c).await.1);
    assert_eq!(at_half.len(), 1, "{at_half:?}");
    assert_eq!(at_half[0].0, EventKind::Failing);
    assert_eq!(at_half[0].1["percent"], 50);
    assert_eq!(at_half[0].1["failure_streak"], 5);
    assert_eq!(at_half[0].1["disable_after_failures"], 10);
    assert_eq!(at_half[0].1["last_error"], "status 500");
    fail(1).await;
    assert!(streak(&checked(h, &c).await.1).is_empty(), "60 %: 50 said");
    fail(3).await;
    let at_ninety = streak(&checked(h, &c).await.1);
    assert_eq!(at_ninety.len(), 1);
    assert_eq!(at_ninety[0].1["percent"], 90);
    assert_eq!(
        at_ninety[0].1["failing_since"],
        at_half[0].1["failing_since"]
    );

    // A success ends the streak: recovered, once.
    fail(0).await;
    task(h, "ok", &crm, Region::US).await;
    h.clock().advance(Duration::seconds(1));
    answer_all(h, 200).await;
    let recovered = streak(&checked(h, &c).await.1);
    assert_eq!(recovered.len(), 1, "{recovered:?}");
    assert_eq!(recovered[0].0, EventKind::Recovered);
    assert_eq!(
        recovered[0].1["failing_since"],
        at_half[0].1["failing_since"]
    );
    assert_eq!(recovered[0].1["percent"], 90);
    assert!(streak(&checked(h, &c).await.1).is_empty());

    // A new streak is a new one: announced again from its first level.
    fail(5).await;
    let again = streak(&checked(h, &c).await.1);
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].1["percent"], 50);
    assert_ne!(again[0].1["failing_since"], at_half[0].1["failing_since"]);
}

pub async fn a_disabled_destination_is_not_announced_failing<H: Harness>(h: &H) {
    let crm = DestinationId::new("crm").unwrap();
    let new = NewDestination::new(crm.clone(), Region::US, "http://127.0.0.1:9/", None)
        .unwrap()
        .with_overrides(DisableOverrides::new(Some(0), Some(2)).unwrap());
    h.store().add_destination(new).await.unwrap();
    for r in ["a", "b"] {
        task(h, r, &crm, Region::US).await;
    }
    h.clock().advance(Duration::seconds(1));
    answer_all(h, 500).await;
    let (_, events) = checked(h, &check(true)).await;
    let kinds: Vec<_> = events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, vec![EventKind::Disabled, EventKind::TaskFailed]);
    // Enabled again: it was never announced failing, so no recovery.
    h.store().enable_destination(&crm).await.unwrap();
    let (_, events) = checked(h, &check(true)).await;
    let kinds: Vec<_> = events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, vec![EventKind::Enabled]);
}
