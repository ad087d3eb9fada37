//! The quota a receiver announced, shared through the destination's row:
//! token takes pace by it until it resets. Each note carries the number of
//! the token its request went out with: the tokens granted after it count
//! against what it announced, and an answer to an earlier request than the
//! stored quota's is ignored.

use remit::policy::Quota;
use remit::store::{QuotaNote, Rates};

use super::*;

/// An announcement made before any token was granted.
fn note(d: &DestinationId, remaining: u64, resets_in: Duration) -> QuotaNote {
    answer_to(d, 0, remaining, resets_in)
}

/// The announcement on the answer to the request sent with token `token`
/// (at the pinned clock's start).
fn answer_to(d: &DestinationId, token: u64, remaining: u64, resets_in: Duration) -> QuotaNote {
    QuotaNote {
        destination: d.clone(),
        quota: Quota {
            remaining,
            resets_in,
            limit: Some(100),
            window: None,
        },
        token,
        sent_at: t0() - Duration::seconds(1),
    }
}

/// An announcement whose policy named its limit and window.
fn with_window(note: QuotaNote, limit: u64, window: Duration) -> QuotaNote {
    QuotaNote {
        quota: Quota {
            limit: Some(limit),
            window: Some(window),
            ..note.quota
        },
        ..note
    }
}

fn waits_about(tokens: RateGrant, seconds: f64) {
    match tokens {
        RateGrant::WaitFor(wait) => assert!(
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
        granted(4, 4)
    );
    // 6 remain for 10 s: 0.6/s, a token every 1.67 s instead of every 10 ms.
    waits_about(s.take_tokens(&d, 100.0, 4, 10).await.unwrap(), 1.0 / 0.6);
    h.clock().advance(Duration::seconds(2));
    assert_eq!(
        s.take_tokens(&d, 100.0, 4, 10).await.unwrap(),
        granted(1, 5)
    );
}

pub async fn a_generous_quota_never_raises_the_configured_rate<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    s.learn_quotas(&[note(&d, 1000, Duration::seconds(10))])
        .await
        .unwrap();
    assert_eq!(s.take_tokens(&d, 5.0, 3, 10).await.unwrap(), granted(3, 3));
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
        RateGrant::WaitFor(std::time::Duration::from_secs(30))
    );
    h.clock().advance(Duration::seconds(10));
    assert_eq!(
        s.take_tokens(&d, 100.0, 5, 5).await.unwrap(),
        RateGrant::WaitFor(std::time::Duration::from_secs(20)),
        "every process waits for the same reset"
    );
    // The receiver announces nothing more: past the reset the configured
    // rate applies again.
    h.clock()
        .advance(Duration::seconds(20) + Duration::milliseconds(100));
    assert_eq!(s.take_tokens(&d, 100.0, 5, 5).await.unwrap(), granted(5, 5));
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
        granted(3, 3),
        "the later note of a batch wins"
    );
    assert_eq!(
        s.take_tokens(&b, 100.0, 3, 3).await.unwrap(),
        RateGrant::WaitFor(std::time::Duration::from_secs(40))
    );
    // A later batch replaces what an earlier one said: instead of the
    // 40 s hold, the bucket (emptied by it) refills at 20 per 10 s.
    s.learn_quotas(&[note(&b, 20, Duration::seconds(10))])
        .await
        .unwrap();
    waits_about(s.take_tokens(&b, 100.0, 3, 3).await.unwrap(), 0.5);
    s.learn_quotas(&[]).await.unwrap();
}

pub async fn requests_sent_after_the_answered_one_count_against_its_announcement<H: Harness>(
    h: &H,
) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        granted(10, 10)
    );
    // The answer to the fourth request says 6 remain: the receiver had not
    // yet seen the six sent after it, which spend them, so every process
    // holds until the reset.
    s.learn_quotas(&[answer_to(&d, 4, 6, Duration::seconds(10))])
        .await
        .unwrap();
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        RateGrant::WaitFor(std::time::Duration::from_secs(10))
    );
}

pub async fn requests_sent_before_the_answered_one_are_not_counted_again<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        granted(10, 10)
    );
    // The answer to the last request sent: the receiver counted all ten,
    // and the 3 it announces are what remains. 4 s on, 3 remain for 6 s:
    // 0.5 a second, so the bucket (emptied by the take) holds 2.
    s.learn_quotas(&[answer_to(&d, 10, 3, Duration::seconds(10))])
        .await
        .unwrap();
    h.clock().advance(Duration::seconds(4));
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        granted(2, 12)
    );
}

pub async fn an_answer_to_an_earlier_request_never_replaces_a_later_ones<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        granted(10, 10)
    );
    // The answer to the last request: nothing remains for 30 s.
    s.learn_quotas(&[answer_to(&d, 10, 0, Duration::seconds(30))])
        .await
        .unwrap();
    // A slow answer to the third, an older view of the receiver's window,
    // arrives after it.
    s.learn_quotas(&[answer_to(&d, 3, 50, Duration::seconds(10))])
        .await
        .unwrap();
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        RateGrant::WaitFor(std::time::Duration::from_secs(30))
    );
}

/// Tokens are numbered as they are granted, and a process may send one it
/// was granted long before another process's later ones: an answer to a
/// request sent after the stored quota was learned is fresher whatever its
/// number, and replaces it.
pub async fn an_answer_to_a_request_sent_after_the_stored_one_was_learned_wins<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        granted(10, 10)
    );
    // Another process sent token 10 at once: nothing remains for 30 s.
    s.learn_quotas(&[answer_to(&d, 10, 0, Duration::seconds(30))])
        .await
        .unwrap();
    // This one held token 3, and sent it five seconds later: the receiver
    // answered it after the other, with the window renewed.
    h.clock().advance(Duration::seconds(5));
    let later = QuotaNote {
        sent_at: t0() + Duration::seconds(5),
        ..answer_to(&d, 3, 50, Duration::seconds(60))
    };
    s.learn_quotas(&[later]).await.unwrap();
    // A slow answer to token 5, sent before both, changes nothing: the
    // token kept is still the highest seen.
    s.learn_quotas(&[answer_to(&d, 5, 0, Duration::seconds(300))])
        .await
        .unwrap();
    assert!(
        matches!(
            s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
            RateGrant::Granted { .. }
        ),
        "paced by the fresher answer"
    );
}

pub async fn in_one_batch_the_answer_to_the_latest_request_wins<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        granted(10, 10)
    );
    s.learn_quotas(&[
        answer_to(&d, 10, 0, Duration::seconds(30)),
        answer_to(&d, 3, 50, Duration::seconds(10)),
    ])
    .await
    .unwrap();
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        RateGrant::WaitFor(std::time::Duration::from_secs(30))
    );
}

pub async fn a_quota_with_a_window_renews_once_at_its_reset<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    // Nothing remains for 10 s, of 4 per 20 s.
    let spent = with_window(note(&d, 0, Duration::seconds(10)), 4, Duration::seconds(20));
    s.learn_quotas(&[spent]).await.unwrap();
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        RateGrant::WaitFor(std::time::Duration::from_secs(10))
    );
    // 10 s on, the reset: the next window holds 4 for 20 s, 0.2 a second,
    // not the configured 100 with a burst of 10.
    h.clock().advance(Duration::seconds(10));
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        granted(2, 2)
    );
    // Past the renewed window, without a newer announcement, the
    // configured rate returns.
    h.clock().advance(Duration::seconds(20));
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        granted(10, 12)
    );
}

pub async fn a_quota_renews_to_the_window_that_holds_now<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let spent = with_window(note(&d, 0, Duration::seconds(10)), 4, Duration::seconds(20));
    s.learn_quotas(&[spent]).await.unwrap();
    // Two windows and a half past the reset (nothing taken since the
    // announcement): the third window holds 4 for the 10 s it has left,
    // and the bucket starts full at what remains.
    h.clock().advance(Duration::seconds(60));
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        granted(4, 4)
    );
    assert_eq!(
        s.take_tokens(&d, 100.0, 10, 10).await.unwrap(),
        RateGrant::WaitFor(std::time::Duration::from_secs(10))
    );
}
