//! Destination-wide state: pauses and the shared token bucket.

use super::*;
use remit::store::{Destinations, Leases, Rates};

pub async fn pauses_hold_a_destination<H: Harness>(h: &H) {
    let s = h.store();
    let held = destination(h, "held", Region::US).await;
    let free = destination(h, "free", Region::US).await;
    task(h, "h1", &held, Region::US).await;
    task(h, "f1", &free, Region::US).await;
    let until = t0() + Duration::seconds(120);
    let pause = Duration::seconds(120);
    assert_eq!(s.pause_destination(&held, pause).await.unwrap(), until);
    assert_eq!(
        s.pause_destination(&held, Duration::zero()).await.unwrap(),
        until,
        "the later pause wins"
    );
    let claimed = s.claim_due(&claim(Region::US, "c", 5)).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.destination_id, free);
    h.clock().set(until);
    let claimed = s.claim_due(&claim(Region::US, "c", 5)).await.unwrap();
    assert!(claimed.iter().any(|c| c.task.destination_id == held));
    let ghost = DestinationId::new("ghost").unwrap();
    assert!(matches!(
        s.pause_destination(&ghost, Duration::zero()).await,
        Err(StoreError::NotFound { .. })
    ));
}

pub async fn the_token_bucket_is_shared<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    assert_eq!(s.take_tokens(&d, 5.0, 3, 2).await.unwrap(), granted(2, 2));
    assert_eq!(
        s.take_tokens(&d, 5.0, 3, 2).await.unwrap(),
        granted(1, 3),
        "numbered on from the last grant"
    );
    let wait = std::time::Duration::from_millis(200);
    assert_eq!(
        s.take_tokens(&d, 5.0, 3, 1).await.unwrap(),
        RateGrant::WaitFor(wait)
    );
    h.clock().advance(Duration::hours(1));
    assert_eq!(s.take_tokens(&d, 5.0, 3, 10).await.unwrap(), granted(3, 6));
}

pub async fn many_buckets_are_taken_from_at_once<H: Harness>(h: &H) {
    let s = h.store();
    let a = destination(h, "a", Region::US).await;
    let b = destination(h, "b", Region::US).await;
    let ask = |d: &DestinationId, want| RateRequest {
        destination: d.clone(),
        rate_per_second: 5.0,
        burst: 3,
        want,
    };
    let missing = DestinationId::new("missing").unwrap();
    let answers = s
        .take_tokens_many(&[ask(&a, 2), ask(&b, 5), ask(&a, 2), ask(&missing, 1)])
        .await
        .unwrap();
    assert_eq!(
        answers,
        vec![
            Some(granted(2, 2)),
            Some(granted(3, 3)),
            Some(granted(1, 3)),
            None
        ],
        "asks for one bucket share it (and its numbers) in order"
    );
    let wait = std::time::Duration::from_millis(200);
    assert_eq!(
        s.take_tokens_many(&[ask(&a, 1)]).await.unwrap(),
        vec![Some(RateGrant::WaitFor(wait))]
    );
    assert_eq!(
        s.take_tokens(&b, 5.0, 3, 1).await.unwrap(),
        RateGrant::WaitFor(wait),
        "one take and many share the bucket"
    );
    assert!(s.take_tokens_many(&[]).await.unwrap().is_empty());
}
