//! A destination's health: a failure streak long enough in count and time
//! disables it in the finish that tips it, each failure leaves its error
//! and when it happened, a success ends the streak and clears the error, a
//! receiver pacing remit (429 or 503 with Retry-After) does not count, and
//! an operator disables and enables by hand.

use remit::domain::DisableOverrides;
use remit::policy::{Decision, Transition};
use remit::store::{Alerts, Destinations, Finish, Finished, Leases};

use super::*;

async fn fragile<H: Harness>(h: &H, id: &str, failures: u32) -> DestinationId {
    let id = DestinationId::new(id).unwrap();
    let new = NewDestination::new(id.clone(), Region::US, "http://127.0.0.1:9/", None)
        .unwrap()
        .with_overrides(DisableOverrides::new(Some(0), Some(failures)).unwrap());
    h.store().add_destination(new).await.unwrap();
    id
}

/// An hour on, claims the one due task and finishes it with `status`.
async fn answer<H: Harness>(h: &H, d: &DestinationId, status: u16, paced: bool) -> Finished {
    let claimed = claim_one(h).await;
    let transition = match status {
        200..=299 => Transition::Deliver,
        _ => Transition::Fail(FailureReason::Status(status)),
    };
    let decision = Decision {
        transition,
        pause_destination_until: None,
        record: AttemptRecord {
            http_status: Some(status),
            retry_after_raw: paced.then(|| "30".to_owned()),
            ..AttemptRecord::default()
        },
    };
    let finish = Finish {
        lease: claimed.lease(),
        destination: d.clone(),
        decision,
    };
    let finished = h.store().finish_many(&[finish]).await.unwrap();
    assert_eq!(finished.outcomes, vec![TransitionOutcome::Applied]);
    finished
}

/// The decision a finish with `status` carries (no Retry-After).
fn decided(status: u16) -> Decision {
    let transition = match status {
        200..=299 => Transition::Deliver,
        _ => Transition::Fail(FailureReason::Status(status)),
    };
    Decision {
        transition,
        pause_destination_until: None,
        record: record(status),
    }
}

/// An hour on, claims every due task and finishes them in one batch, the
/// n-th with the n-th of `statuses`.
async fn answer_in_one_batch<H: Harness>(h: &H, d: &DestinationId, statuses: &[u16]) -> Finished {
    h.clock().advance(Duration::hours(1));
    let claimed = h
        .store()
        .claim_due(&claim(Region::US, "c", 10))
        .await
        .unwrap();
    assert_eq!(claimed.len(), statuses.len(), "one due task per status");
    let batch: Vec<Finish> = claimed
        .iter()
        .zip(statuses)
        .map(|(c, status)| Finish {
            lease: c.lease(),
            destination: d.clone(),
            decision: decided(*status),
        })
        .collect();
    let finished = h.store().finish_many(&batch).await.unwrap();
    assert_eq!(
        finished.outcomes,
        vec![TransitionOutcome::Applied; statuses.len()]
    );
    finished
}

/// The outbox as (kind, destination, reason, at, last error).
async fn outbox<H: Harness>(
    h: &H,
) -> Vec<(
    remit::domain::EventKind,
    String,
    Option<String>,
    chrono::DateTime<chrono::Utc>,
    Option<String>,
)> {
    h.store()
        .destination_events(Region::US, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|e| {
            (
                e.kind,
                e.destination.as_str().to_owned(),
                e.reason,
                e.at,
                e.last_error,
            )
        })
        .collect()
}

/// What a batch that disabled `crm` at `now` with `reason` leaves: the
/// destination disabled then, reported once as the batch left it, and one
/// event in the outbox carrying the tipping failure's error (a 504).
async fn disabled_by_the_batch<H: Harness>(
    h: &H,
    after: &remit::domain::Destination,
    finished: &Finished,
    reason: &str,
    now: chrono::DateTime<chrono::Utc>,
) {
    use remit::domain::EventKind;
    assert!(!after.enabled);
    assert_eq!(after.health.disabled_reason.as_deref(), Some(reason));
    assert_eq!(after.health.disabled_at, Some(now));
    assert_eq!(finished.disabled.len(), 1);
    assert_eq!(&finished.disabled[0].destination, after);
    assert_eq!(
        outbox(h).await,
        vec![(
            EventKind::Disabled,
            "crm".to_owned(),
            Some(reason.to_owned()),
            now,
            Some("status 504".to_owned())
        )]
    );
}

/// A batch applies its outcomes in its order, exactly as if each finish
/// came on its own: failures that make the streak long enough disable the
/// destination there (the event says so, with the tipping failure's
/// error), and the success after them ends the streak and clears the last
/// error but does not enable the destination again.
pub async fn failures_that_tip_then_a_success_in_one_batch_disable<H: Harness>(h: &H) {
    let s = h.store();
    let d = fragile(h, "crm", 3).await;
    for r in ["r1", "r2", "r3", "r4", "r5"] {
        task(h, r, &d, Region::US).await;
    }
    // A streak of one, an hour before the batch.
    answer(h, &d, 500, false).await;

    let finished = answer_in_one_batch(h, &d, &[502, 504, 404, 204]).await;
    let now = t0() + Duration::hours(2);
    let reason = "auto: 3 failures in a row over 60 minutes";
    let after = s.destination(&d).await.unwrap().unwrap();
    assert_eq!(after.health.failure_streak, 0);
    assert_eq!(after.health.failure_streak_since, None);
    assert_eq!(after.health.last_error, None, "the success cleared it");
    assert_eq!(after.health.last_error_at, None);
    disabled_by_the_batch(h, &after, &finished, reason, now).await;
}

/// A success first in a batch ends the streak before the batch's
/// failures count: they start a streak of their own, from the batch's
/// now, that disables the destination when long enough by itself.
pub async fn a_success_then_failures_that_tip_in_one_batch_disable<H: Harness>(h: &H) {
    let s = h.store();
    let d = fragile(h, "crm", 2).await;
    for r in ["r1", "r2", "r3", "r4"] {
        task(h, r, &d, Region::US).await;
    }
    // A streak of one, an hour before the batch.
    answer(h, &d, 500, false).await;

    let finished = answer_in_one_batch(h, &d, &[204, 502, 504]).await;
    let now = t0() + Duration::hours(2);
    let reason = "auto: 2 failures in a row over 0 seconds";
    let after = s.destination(&d).await.unwrap().unwrap();
    assert_eq!(after.health.failure_streak, 2);
    assert_eq!(after.health.failure_streak_since, Some(now));
    assert_eq!(after.health.last_error.as_deref(), Some("status 504"));
    assert_eq!(after.health.last_error_at, Some(now));
    disabled_by_the_batch(h, &after, &finished, reason, now).await;
}

pub async fn a_failure_streak_disables_its_destination_in_the_finish<H: Harness>(h: &H) {
    let s = h.store();
    let d = fragile(h, "crm", 3).await;
    for r in ["r1", "r2", "r3", "r4"] {
        task(h, r, &d, Region::US).await;
    }
    let first_failed_at = t0() + Duration::hours(1);
    assert!(answer(h, &d, 500, false).await.disabled.is_empty());
    assert!(answer(h, &d, 502, false).await.disabled.is_empty());
    let midway = s.destination(&d).await.unwrap().unwrap();
    assert!(midway.enabled);
    assert_eq!(midway.health.failure_streak, 2);
    assert_eq!(midway.health.failure_streak_since, Some(first_failed_at));

    let tipped = answer(h, &d, 500, false).await;
    assert_eq!(tipped.disabled.len(), 1);
    let disabled = &tipped.disabled[0].destination;
    assert_eq!(disabled.id, d);
    assert!(!disabled.enabled);
    let now = t0() + Duration::hours(3);
    assert_eq!(
        disabled.health.disabled_reason.as_deref(),
        Some("auto: 3 failures in a row over 2 hours")
    );
    assert_eq!(disabled.health.disabled_at, Some(now));
    assert_eq!(disabled.health.last_error.as_deref(), Some("status 500"));
    assert_eq!(disabled.health.last_error_at, Some(now));
    assert_eq!(s.destination(&d).await.unwrap().as_ref(), Some(disabled));

    // Its last task waits, unsent and not failed.
    h.clock().advance(Duration::hours(1));
    assert!(s
        .claim_due(&claim(Region::US, "c", 10))
        .await
        .unwrap()
        .is_empty());
}

pub async fn pacing_does_not_count_and_a_success_ends_the_streak<H: Harness>(h: &H) {
    let s = h.store();
    let d = fragile(h, "crm", 2).await;
    for r in ["r1", "r2", "r3", "r4", "r5"] {
        task(h, r, &d, Region::US).await;
    }
    answer(h, &d, 500, false).await;
    answer(h, &d, 429, true).await;
    answer(h, &d, 503, true).await;
    let paced = s.destination(&d).await.unwrap().unwrap();
    assert!(paced.enabled, "a 429 or 503 with Retry-After never counts");
    assert_eq!(paced.health.failure_streak, 1);
    assert_eq!(paced.health.last_error.as_deref(), Some("status 500"));
    assert_eq!(
        paced.health.last_error_at,
        Some(t0() + Duration::hours(1)),
        "the failure's time: pacing neither moves nor clears it"
    );

    answer(h, &d, 204, false).await;
    let healed = s.destination(&d).await.unwrap().unwrap();
    assert_eq!(healed.health.failure_streak, 0);
    assert_eq!(healed.health.failure_streak_since, None);
    assert_eq!(
        (healed.health.last_error, healed.health.last_error_at),
        (None, None),
        "recovered: the last error is gone"
    );

    // A 429 without Retry-After is a failure like any other.
    answer(h, &d, 429, false).await;
    let limited = s.destination(&d).await.unwrap().unwrap();
    assert_eq!(limited.health.failure_streak, 1);
    assert_eq!(limited.health.last_error.as_deref(), Some("status 429"));
    assert_eq!(
        limited.health.last_error_at,
        Some(t0() + Duration::hours(5))
    );
    assert!(limited.enabled);
}

/// Enabling a destination by hand ends its streak but keeps its last error
/// (nothing has succeeded since); the first success after clears it, and a
/// success after that writes nothing more.
pub async fn the_last_error_stays_until_a_success<H: Harness>(h: &H) {
    let s = h.store();
    let d = fragile(h, "crm", 1).await;
    for r in ["r1", "r2", "r3"] {
        task(h, r, &d, Region::US).await;
    }
    let tipped = answer(h, &d, 500, false).await;
    assert_eq!(tipped.disabled.len(), 1);
    s.enable_destination(&d).await.unwrap();
    let enabled = s.destination(&d).await.unwrap().unwrap();
    assert_eq!(enabled.health.failure_streak, 0);
    assert_eq!(enabled.health.last_error.as_deref(), Some("status 500"));
    assert_eq!(
        enabled.health.last_error_at,
        Some(t0() + Duration::hours(1))
    );

    answer(h, &d, 200, false).await;
    let recovered = s.destination(&d).await.unwrap().unwrap();
    assert_eq!(
        (&recovered.health.last_error, recovered.health.last_error_at),
        (&None, None)
    );
    answer(h, &d, 200, false).await;
    assert_eq!(s.destination(&d).await.unwrap().unwrap(), recovered);
}

pub async fn an_operator_disables_and_enables_a_destination<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    task(h, "r1", &d, Region::US).await;
    h.clock().advance(Duration::hours(1));
    let off = s
        .disable_destination(&d, Some("receiver migrating".into()))
        .await
        .unwrap();
    assert!(!off.enabled);
    assert_eq!(
        off.health.disabled_reason.as_deref(),
        Some("receiver migrating")
    );
    assert_eq!(off.health.disabled_at, Some(t0() + Duration::hours(1)));
    // A second disable keeps the first reason and time.
    h.clock().advance(Duration::minutes(5));
    assert_eq!(s.disable_destination(&d, None).await.unwrap(), off);
    assert!(s
        .claim_due(&claim(Region::US, "c", 10))
        .await
        .unwrap()
        .is_empty());

    let on = s.enable_destination(&d).await.unwrap();
    assert!(on.enabled);
    assert_eq!(on.health.disabled_reason, None);
    assert_eq!(on.health.disabled_at, None);
    assert_eq!(on.health.failure_streak, 0);
    assert_eq!(s.destination(&d).await.unwrap(), Some(on));
    assert_eq!(
        s.claim_due(&claim(Region::US, "c", 10))
            .await
            .unwrap()
            .len(),
        1
    );

    let manual = s.disable_destination(&d, None).await.unwrap();
    assert_eq!(manual.health.disabled_reason.as_deref(), Some("manual"));
    let unknown = DestinationId::new("nobody").unwrap();
    for result in [
        s.disable_destination(&unknown, None).await,
        s.enable_destination(&unknown).await,
    ] {
        assert!(
            matches!(result, Err(StoreError::NotFound { .. })),
            "{result:?}"
        );
    }
}

pub async fn disables_and_enables_leave_events_in_the_outbox<H: Harness>(h: &H) {
    use remit::domain::EventKind;
    let s = h.store();
    let d = fragile(h, "crm", 1).await;
    let other = destination(h, "billing", Region::US).await;
    task(h, "r1", &d, Region::US).await;
    assert!(s
        .destination_events(Region::US, 10)
        .await
        .unwrap()
        .is_empty());

    answer(h, &d, 503, false).await;
    let disabled_at = t0() + Duration::hours(1);
    // Already disabled: a second disable records nothing.
    s.disable_destination(&d, Some("again".into()))
        .await
        .unwrap();
    h.clock().advance(Duration::minutes(1));
    s.disable_destination(&other, None).await.unwrap();
    h.clock().advance(Duration::minutes(1));
    s.enable_destination(&d).await.unwrap();
    // Enabled already: nothing more.
    s.enable_destination(&d).await.unwrap();

    let events = s.destination_events(Region::US, 10).await.unwrap();
    let seen: Vec<_> = events
        .iter()
        .map(|e| (e.kind, e.destination.as_str(), e.reason.as_deref(), e.at))
        .collect();
    assert_eq!(
        seen,
        vec![
            (
                EventKind::Disabled,
                "crm",
                Some("auto: 1 failure in a row over 0 seconds"),
                disabled_at
            ),
            (
                EventKind::Disabled,
                "billing",
                Some("manual"),
                disabled_at + Duration::minutes(1)
            ),
            (
                EventKind::Enabled,
                "crm",
                None,
                disabled_at + Duration::minutes(2)
            ),
        ]
    );
    assert_eq!(events[0].last_error.as_deref(), Some("status 503"));
    assert_eq!(events[0].region, Region::US);
    assert!(s
        .destination_events(Region::EU, 10)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        s.destination_events(Region::US, 1).await.unwrap(),
        events[..1]
    );

    let first_two = [events[0].id, events[1].id];
    assert_eq!(s.forget_destination_events(&first_two).await.unwrap(), 2);
    assert_eq!(s.forget_destination_events(&first_two).await.unwrap(), 0);
    assert_eq!(
        s.destination_events(Region::US, 10).await.unwrap(),
        events[2..]
    );
}
