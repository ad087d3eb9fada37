//! The import checks, one broken promise at a time.

use chrono::{Duration, TimeZone};

use super::*;
use crate::domain::{Attempt, AttemptOutcome, AttemptRecord};
use crate::payload_crypto::SealedPayload;

fn record() -> TaskRecord {
    let now = Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 0).unwrap();
    let mut task = Task::leased_for_tests(now, Duration::seconds(30), Duration::hours(1), 1);
    task.idempotency_key = idempotency_key(&task.tenant_id, &task.reminder_id);
    TaskRecord {
        attempts: vec![Attempt {
            task_id: task.id,
            attempt_number: 1,
            lease_token: 1,
            lease_owner: "us-1".into(),
            outcome: AttemptOutcome::Abandoned,
            observed: AttemptRecord::default(),
            next_available_at: None,
            recorded_at: now,
        }],
        task,
        content_type: "application/json".into(),
        sealed: SealedPayload {
            key_fingerprint: vec![1],
            nonce: vec![2],
            ciphertext: vec![3],
        },
    }
}

fn refused(change: impl FnOnce(&mut TaskRecord)) -> &'static str {
    let mut r = record();
    change(&mut r);
    check_imported_task(&r).unwrap_err().field
}

#[test]
fn a_sound_record_passes() {
    check_imported_task(&record()).unwrap();
}

#[test]
fn tokens_are_bounded_at_two_to_the_53() {
    let mut r = record();
    r.task.lease_token = Some(MAX_IMPORTED_LEASE_TOKEN);
    r.attempts[0].lease_token = MAX_IMPORTED_LEASE_TOKEN;
    check_imported_task(&r).unwrap();
    assert_eq!(
        refused(|r| r.task.lease_token = Some(MAX_IMPORTED_LEASE_TOKEN + 1)),
        "lease_token"
    );
    assert_eq!(refused(|r| r.task.lease_token = Some(0)), "lease_token");
    assert_eq!(
        refused(|r| r.attempts[0].lease_token = -1),
        "attempts.lease_token"
    );
}

#[test]
fn state_and_columns_agree() {
    assert_eq!(refused(|r| r.task.lease_owner = None), "lease_owner");
    assert_eq!(
        refused(|r| r.task.lease_owner = Some(" ".into())),
        "lease_owner"
    );
    assert_eq!(
        refused(|r| r.task.state = TaskState::Pending),
        "lease_token"
    );
    assert_eq!(
        refused(|r| r.task.finalized_at = Some(r.task.not_before)),
        "finalized_at"
    );
    assert_eq!(
        refused(|r| r.task.attempts_before_replay = 2),
        "attempts_before_replay"
    );
    assert_eq!(
        refused(|r| r.task.available_at = r.task.not_before - Duration::seconds(1)),
        "available_at"
    );
}

#[test]
fn times_lie_in_range() {
    assert_eq!(
        refused(|r| r.task.created_at = DateTime::<Utc>::MIN_UTC),
        "created_at"
    );
    assert_eq!(
        refused(|r| r.attempts[0].recorded_at = EARLIEST - Duration::microseconds(1)),
        "attempts.recorded_at"
    );
    let mut far = record();
    far.task.retry_horizon_at = LATEST;
    check_imported_task(&far).unwrap();
}

#[test]
fn the_key_is_the_reminders_or_the_tasks_own_old_one() {
    let mut old = record();
    old.task.idempotency_key = legacy_idempotency_key(old.task.id);
    check_imported_task(&old).unwrap();
    assert_eq!(
        refused(
            |r| r.task.idempotency_key = legacy_idempotency_key(TaskId(uuid::Uuid::from_u128(9)))
        ),
        "idempotency_key"
    );
}

#[test]
fn an_import_never_repeats_an_id_a_reminder_or_a_payload() {
    let mut check = ImportCheck::new("line");
    check.task(&record(), 2).unwrap();
    let err = check.task(&record(), 3).unwrap_err();
    assert_eq!(err.field, "id");
    assert!(err.reason.contains("line 2"), "{}", err.reason);
}
