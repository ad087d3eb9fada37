use super::*;
use chrono::{Duration, TimeZone};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::SeedableRng;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 2).unwrap()
}

fn observed(attempt: u32, response: Result<(u16, Option<String>), TransportError>) -> Observed {
    Observed {
        attempt,
        retry_horizon_at: now() + Duration::days(3),
        started_at: now() - Duration::milliseconds(40),
        received_at: now(),
        server_date: None,
        response,
    }
}

fn status(code: u16, retry_after: Option<&str>) -> Result<(u16, Option<String>), TransportError> {
    Ok((code, retry_after.map(str::to_owned)))
}

fn run(o: &Observed) -> Decision {
    decide(o, &RetryPolicy::default(), &mut StdRng::seed_from_u64(0))
}

#[test]
fn success_delivers() {
    for code in [200, 201, 204, 299] {
        assert_eq!(
            run(&observed(1, status(code, None))).transition,
            Transition::Deliver
        );
    }
}

#[test]
fn too_many_requests_waits_for_the_header_and_pauses_the_destination() {
    let d = run(&observed(1, status(429, Some("120"))));
    let at = now() + Duration::seconds(120);
    assert_eq!(d.transition, Transition::RetryWait { available_at: at });
    assert_eq!(d.pause_destination_until, Some(at));
    assert_eq!(d.record.retry_after_raw.as_deref(), Some("120"));
    assert_eq!(d.record.retry_after_deadline, Some(at));
    assert_eq!(d.record.received_at, Some(now()));
    assert_eq!(d.next_available_at(), Some(at));
}

#[test]
fn too_many_requests_without_header_backs_off_and_still_pauses() {
    let d = run(&observed(1, status(429, None)));
    let next = d.next_available_at().unwrap();
    assert!(next >= now() && next <= now() + Duration::seconds(5));
    assert_eq!(d.pause_destination_until, Some(next));
}

#[test]
fn unavailable_with_header_is_treated_like_429() {
    let d = run(&observed(
        1,
        status(503, Some("Thu, 13 Aug 2026 09:02:02 GMT")),
    ));
    let at = Utc.with_ymd_and_hms(2026, 8, 13, 9, 2, 2).unwrap();
    assert_eq!(d.transition, Transition::RetryWait { available_at: at });
    assert_eq!(d.pause_destination_until, Some(at));
}

#[test]
fn unavailable_without_header_backs_off_without_a_pause() {
    let d = run(&observed(2, status(503, None)));
    assert!(matches!(d.transition, Transition::RetryWait { .. }));
    assert_eq!(d.pause_destination_until, None);
}

#[test]
fn transient_statuses_and_transport_errors_retry() {
    for code in [408, 425, 500, 502, 504] {
        assert!(
            matches!(
                run(&observed(1, status(code, None))).transition,
                Transition::RetryWait { .. }
            ),
            "{code}"
        );
    }
    for kind in [
        TransportError::Timeout,
        TransportError::Connect,
        TransportError::Tls,
        TransportError::Io,
    ] {
        let d = run(&observed(1, Err(kind)));
        assert!(matches!(d.transition, Transition::RetryWait { .. }));
        assert_eq!(d.record.transport_error.as_deref(), Some(kind.as_str()));
        assert_eq!(d.record.http_status, None);
    }
}

#[test]
fn a_blocked_address_fails_at_once_even_on_the_first_attempt() {
    let d = run(&observed(1, Err(TransportError::BlockedAddress)));
    assert_eq!(
        d.transition,
        Transition::Fail(FailureReason::BlockedAddress)
    );
    assert_eq!(d.pause_destination_until, None);
    assert_eq!(d.next_available_at(), None);
    assert_eq!(d.record.transport_error.as_deref(), Some("blocked_address"));
    assert_eq!(d.record.http_status, None);
    assert_eq!(
        d.record.started_at,
        Some(now() - Duration::milliseconds(40))
    );
    assert_eq!(d.record.received_at, Some(now()));
    assert_eq!(FailureReason::BlockedAddress.code(), "blocked_address");
}

#[test]
fn permanent_statuses_fail_with_the_status() {
    for code in [400, 401, 403, 404, 405, 410, 413, 422, 418, 501] {
        assert_eq!(
            run(&observed(1, status(code, None))).transition,
            Transition::Fail(FailureReason::Status(code))
        );
    }
}

#[test]
fn redirects_are_failures() {
    assert_eq!(
        run(&observed(1, status(301, None))).transition,
        Transition::Fail(FailureReason::Redirect(301))
    );
}

#[test]
fn retryable_list_is_configurable() {
    let policy = RetryPolicy {
        retryable_statuses: vec![404],
        ..RetryPolicy::default()
    };
    let d = decide(
        &observed(1, status(404, None)),
        &policy,
        &mut StdRng::seed_from_u64(0),
    );
    assert!(matches!(d.transition, Transition::RetryWait { .. }));
    let d = decide(
        &observed(1, status(500, None)),
        &policy,
        &mut StdRng::seed_from_u64(0),
    );
    assert_eq!(d.transition, Transition::Fail(FailureReason::Status(500)));
}

#[test]
fn max_attempts_ends_retries() {
    let d = run(&observed(20, status(500, None)));
    assert_eq!(d.transition, Transition::Fail(FailureReason::MaxAttempts));
}

#[test]
fn a_deadline_past_the_horizon_fails_instead_of_retrying_early() {
    let mut o = observed(1, status(429, Some("7200")));
    o.retry_horizon_at = now() + Duration::hours(1);
    let d = run(&o);
    assert_eq!(d.transition, Transition::Fail(FailureReason::RetryHorizon));
    assert_eq!(d.pause_destination_until, Some(now() + Duration::hours(2)));
}

#[test]
fn server_delay_is_capped() {
    let policy = RetryPolicy {
        max_server_delay: Duration::minutes(10),
        ..RetryPolicy::default()
    };
    let d = decide(
        &observed(1, status(429, Some("86400"))),
        &policy,
        &mut StdRng::seed_from_u64(0),
    );
    assert_eq!(d.next_available_at(), Some(now() + Duration::minutes(10)));
}

proptest! {
    #[test]
    fn jitter_never_lands_before_a_server_deadline(
        seed in any::<u64>(),
        delay in 0u32..200_000,
        attempt in 1u32..19,
        code in prop::sample::select(vec![429u16, 503, 500, 502]),
    ) {
        let o = observed(attempt, status(code, Some(&delay.to_string())));
        let d = decide(&o, &RetryPolicy::default(), &mut StdRng::seed_from_u64(seed));
        let wanted = now() + Duration::seconds(i64::from(delay)).min(Duration::hours(24));
        if let Transition::RetryWait { available_at } = d.transition {
            prop_assert_eq!(available_at, wanted);
        } else {
            prop_assert_eq!(d.transition, Transition::Fail(FailureReason::RetryHorizon));
            prop_assert!(wanted > o.retry_horizon_at);
        }
    }
}
