//! Destination-wide state: pauses and the shared token bucket.

use super::*;

pub async fn pauses_hold_a_destination<H: Harness>(h: &H) {
    let s = h.store();
    let held = destination(h, "held", Region::Us).await;
    let free = destination(h, "free", Region::Us).await;
    task(h, "h1", &held, Region::Us).await;
    task(h, "f1", &free, Region::Us).await;
    let until = t0() + Duration::seconds(120);
    let pause = Duration::seconds(120);
    assert_eq!(s.pause_destination(&held, pause).await.unwrap(), until);
    assert_eq!(
        s.pause_destination(&held, Duration::zero()).await.unwrap(),
        until,
        "the later pause wins"
    );
    let claimed = s.claim_due(&claim(Region::Us, "c", 5)).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.destination_id, free);
    h.clock().set(until);
    let claimed = s.claim_due(&claim(Region::Us, "c", 5)).await.unwrap();
    assert!(claimed.iter().any(|c| c.task.destination_id == held));
    let ghost = DestinationId::new("ghost").unwrap();
    assert!(matches!(
        s.pause_destination(&ghost, Duration::zero()).await,
        Err(StoreError::NotFound { .. })
    ));
}

pub async fn the_token_bucket_is_shared<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::Us).await;
    assert_eq!(
        s.take_tokens(&d, 5.0, 3, 2).await.unwrap(),
        Tokens::Granted(2)
    );
    assert_eq!(
        s.take_tokens(&d, 5.0, 3, 2).await.unwrap(),
        Tokens::Granted(1)
    );
    let wait = std::time::Duration::from_millis(200);
    assert_eq!(
        s.take_tokens(&d, 5.0, 3, 1).await.unwrap(),
        Tokens::WaitFor(wait)
    );
    h.clock().advance(Duration::hours(1));
    assert_eq!(
        s.take_tokens(&d, 5.0, 3, 10).await.unwrap(),
        Tokens::Granted(3)
    );
}
