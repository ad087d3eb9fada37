//! The quota a receiver announced, shared through the destination's row:
//! token takes pace by it until it resets.

use remit::policy::Quota;
use remit::store::QuotaNote;

use super::*;

fn note(d: &DestinationId, remaining: u64, resets_in: Duration) -> QuotaNote {
    QuotaNote {
        destination: d.clone(),
        quota: Quota {
            remaining,
            resets_in,
            limit: Some(100),
        },
    }
}

fn waits_about(tokens: Tokens, seconds: f64) {
    match tokens {
        Tokens::WaitFor(wait) => assert!(
            (wait.as_secs_f64() - seconds).abs() < 1e-3,
            "waits {wait:?}, not {seconds} s"
        ),
        granted => panic!("expected a wait of {seconds} s, got {granted:?}"),
    }
}

pub async fn an_announced_quota_paces_the_shared_bucket<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    s.learn_quotas(&[note(&d, 10, Duration::seconds(10))])
        .await
        .unwrap();
    // Configured 100/s with a burst of 4: the bucket still holds 4 at once.
    assert_eq!(
        s.take_tokens(&d, 100.0, 4, 10).await.unwrap(),
        Tokens::Granted(4)
    );
    // 6 remain for 10 s: 0.6/s, a token every 1.67 s instead of every 10 ms.
    waits_about(s.take_tokens(&d, 100.0, 4, 10).await.unwrap(), 1.0 / 0.6);
    h.clock().advance(Duration::seconds(2));
    assert_eq!(
        s.take_tokens(&d, 100.0, 4, 10).await.unwrap(),
        Tokens::Granted(1)
    );
}

pub async fn a_generous_quota_never_raises_the_configured_rate<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    s.learn_quotas(&[note(&d, 1000, Duration::seconds(10))])
        .await
        .unwrap();
    assert_eq!(
        s.take_tokens(&d, 5.0, 3, 10).await.unwrap(),
        Tokens::Granted(3)
    );
    waits_about(s.take_tokens(&d, 5.0, 3, 1).await.unwrap(), 0.2);
}

pub async fn a_spent_quota_holds_until_its_reset_then_the_configured_rate_returns<H: Harness>(
    h: &H,
) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    s.learn_quotas(&[note(&d, 0, Duration::seconds(30))])
        .await
        .unwrap();
    assert_eq!(
        s.take_tokens(&d, 100.0, 5, 5).await.unwrap(),
        Tokens::WaitFor(std::time::Duration::from_secs(30))
    );
    h.clock().advance(Duration::seconds(10));
    assert_eq!(
        s.take_tokens(&d, 100.0, 5, 5).await.unwrap(),
        Tokens::WaitFor(std::time::Duration::from_secs(20)),
        "every process waits for the same reset"
    );
    // The receiver announces nothing more: past the reset the configured
    // rate applies again.
    h.clock()
        .advance(Duration::seconds(20) + Duration::milliseconds(100));
    assert_eq!(
        s.take_tokens(&d, 100.0, 5, 5).await.unwrap(),
        Tokens::Granted(5)
    );
}

pub async fn the_newest_announcement_wins_and_unknown_destinations_are_skipped<H: Harness>(h: &H) {
    let s = h.store();
    let a = destination(h, "a", Region::US).await;
    let b = destination(h, "b", Region::US).await;
    let ghost = DestinationId::new("ghost").unwrap();
    s.learn_quotas(&[
        note(&a, 0, Duration::seconds(30)),
        note(&ghost, 0, Duration::seconds(30)),
        note(&b, 0, Duration::seconds(40)),
        note(&a, 50, Duration::seconds(10)),
    ])
    .await
    .unwrap();
    assert_eq!(
        s.take_tokens(&a, 100.0, 3, 3).await.unwrap(),
        Tokens::Granted(3),
        "the later note of a batch wins"
    );
    assert_eq!(
        s.take_tokens(&b, 100.0, 3, 3).await.unwrap(),
        Tokens::WaitFor(std::time::Duration::from_secs(40))
    );
    // A later batch replaces what an earlier one said: instead of the
    // 40 s hold, the bucket (emptied by it) refills at 20 per 10 s.
    s.learn_quotas(&[note(&b, 20, Duration::seconds(10))])
        .await
        .unwrap();
    waits_about(s.take_tokens(&b, 100.0, 3, 3).await.unwrap(), 0.5);
    s.learn_quotas(&[]).await.unwrap();
}
