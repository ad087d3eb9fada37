use chrono::{DateTime, Duration, TimeZone, Utc};

use super::*;

fn frozen() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 0).unwrap()
}

fn task(attempt_count: i32, horizon: Duration) -> Task {
    Task::leased_for_tests(frozen(), Duration::seconds(30), horizon, attempt_count)
}

fn seen(task: &Task, pause_left: Option<Duration>, lease_left: Duration) -> BeforeSend<'_> {
    BeforeSend {
        task,
        disabled: false,
        pause_left,
        lease_left,
        lease_needed: Duration::seconds(10),
    }
}

#[test]
fn a_healthy_task_goes() {
    let t = task(1, Duration::hours(1));
    let gate = before_send(
        &seen(&t, None, Duration::seconds(30)),
        &RetryPolicy::default(),
    );
    assert_eq!(gate, Gate::Send);
}

#[test]
fn a_pause_holds_it_until_the_pause_ends_without_counting() {
    let t = task(1, Duration::hours(1));
    let left = Duration::milliseconds(1_500);
    let gate = before_send(
        &seen(&t, Some(left), Duration::seconds(30)),
        &RetryPolicy::default(),
    );
    assert_eq!(gate, Gate::HandBack { after: Some(left) });
    let ended = before_send(
        &seen(&t, Some(Duration::zero()), Duration::seconds(30)),
        &RetryPolicy::default(),
    );
    assert_eq!(ended, Gate::Send, "a pause with nothing left holds nothing");
}

#[test]
fn a_disabled_destination_gets_nothing_and_the_task_goes_back_at_once() {
    let t = task(1, Duration::hours(1));
    let gate = before_send(
        &BeforeSend {
            disabled: true,
            ..seen(&t, Some(Duration::seconds(5)), Duration::seconds(30))
        },
        &RetryPolicy::default(),
    );
    assert_eq!(gate, Gate::HandBack { after: None });
}

#[test]
fn a_lease_too_short_for_the_request_and_its_finish_hands_it_back() {
    let t = task(1, Duration::hours(1));
    let gate = before_send(
        &seen(&t, None, Duration::seconds(9)),
        &RetryPolicy::default(),
    );
    assert_eq!(gate, Gate::HandBack { after: None });
}

#[test]
fn attempts_used_up_by_dead_consumers_fail_unsent() {
    let policy = RetryPolicy::default();
    let t = task(
        i32::try_from(policy.max_attempts).unwrap() + 1,
        Duration::hours(1),
    );
    let gate = before_send(&seen(&t, None, Duration::seconds(30)), &policy);
    assert_eq!(gate, Gate::Fail(FailureReason::MaxAttempts));
}
