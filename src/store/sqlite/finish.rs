//! The guarded transitions on SQLite. Each reads the row inside the write
//! lock, checks the lease with `lifecycle::lease_is_current`, applies the transition's
//! rule and writes the row and its attempt back; a refusal is told apart
//! (gone, a repeat, fenced) by `lifecycle::refusal`.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{BigInt, Text};
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use super::attempt_rows::{self, AttemptRow, ATTEMPT_COLUMNS};
use super::rows::{self, destination_row};
use crate::domain::{
    Attempt, AttemptOutcome, AttemptRecord, DestinationEvent, DestinationHour, EventKind,
    FailureReason, Lease, Task, TaskId,
};
use crate::policy::DisableRule;
use crate::store::contract::{
    AutoDisabled, Finish, Finished, Replayed, StoreError, TransitionOutcome,
};
use crate::store::rules::columns::outcome_label;
use crate::store::rules::health;
use crate::store::rules::lifecycle::{self, EndAttempt};

/// Which end a single transition asks for (owned, to cross to the
/// database thread).
pub(super) enum End {
    Failed(FailureReason),
    Abandoned,
}

impl End {
    pub fn with<'a>(&'a self, record: &'a AttemptRecord) -> EndAttempt<'a> {
        match self {
            End::Failed(reason) => EndAttempt::failed(reason, record),
            End::Abandoned => EndAttempt::abandoned(record),
        }
    }
}

/// The row `lease` holds, or why there is none.
fn held(
    conn: &mut SqliteConnection,
    lease: &Lease,
    repeat: Option<AttemptOutcome>,
) -> Result<Result<Task, TransitionOutcome>, StoreError> {
    let Some(task) = rows::task(conn, lease.task_id)? else {
        return Ok(Err(lifecycle::refusal(false, false)));
    };
    if lifecycle::lease_is_current(&task, lease) {
        return Ok(Ok(task));
    }
    let repeated = match lifecycle::repeat_of(repeat) {
        None => false,
        Some(outcome) => {
            #[derive(diesel::QueryableByName)]
            struct Found {
                #[diesel(sql_type = BigInt)]
                n: i64,
            }
            let found: Found = diesel::sql_query(
                "SELECT count(*) AS n FROM attempts \
                 WHERE task_id = ? AND lease_token = ? AND outcome = ?",
            )
            .bind::<Text, _>(lease.task_id.0.to_string())
            .bind::<BigInt, _>(lease.token)
            .bind::<Text, _>(outcome_label(outcome))
            .get_result(conn)?;
            found.n > 0
        }
    };
    Ok(Err(lifecycle::refusal(true, repeated)))
}

pub(super) fn end_attempt(
    conn: &mut SqliteConnection,
    lease: &Lease,
    end: &EndAttempt<'_>,
    now: DateTime<Utc>,
) -> Result<TransitionOutcome, StoreError> {
    let mut task = match held(conn, lease, Some(end.target.1))? {
        Ok(task) => task,
        Err(refusal) => {
            if refusal == TransitionOutcome::Fenced {
                attempt_rows::insert_attempt(
                    conn,
                    &lifecycle::fenced_attempt(lease, end.record, now),
                )?;
            }
            return Ok(refusal);
        }
    };
    let logged = lifecycle::end_attempt(&mut task, lease, end, now);
    rows::write_task(conn, &task)?;
    attempt_rows::insert_attempt(conn, &logged)?;
    in_finish()?;
    Ok(TransitionOutcome::Applied)
}

/// Every finish of the batch, with the pauses it asks for, in the caller's
/// one transaction: all of it commits, or none.
pub(super) fn finish_many(
    conn: &mut SqliteConnection,
    batch: &[Finish],
    now: DateTime<Utc>,
    rule: DisableRule,
) -> Result<Finished, StoreError> {
    let mut finished = Finished::default();
    let mut tipped_ids = Vec::new();
    let mut hours = BTreeMap::new();
    for one in batch {
        if let Some(delay) = one.decision.pause_delay() {
            // As PostgreSQL's: a destination that is not there has nothing
            // to pause, and the finish itself still applies.
            match super::destination_rows::pause(conn, &one.destination, delay, now) {
                Ok(_) | Err(StoreError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        let end = EndAttempt::of(&one.decision);
        let outcome = end_attempt(conn, &one.lease, &end, now)?;
        finished.outcomes.push(outcome);
        if outcome != TransitionOutcome::Applied {
            continue;
        }
        // The destination the task names, not the one the caller said.
        let Some(task) = rows::task(conn, one.lease.task_id)? else {
            continue;
        };
        hours
            .entry(task.destination_id.clone())
            .or_insert_with(|| DestinationHour::empty_at(now))
            .count(&one.decision.record, task.attempt_count, task.not_before);
        let Some(row) = destination_row(conn, &task.destination_id)? else {
            continue;
        };
        let mut d = row.destination()?;
        if let Some(tipped) = health::after_attempt(&mut d, &one.decision.record, now, rule) {
            super::destination_rows::write_health(conn, &d, now)?;
            if tipped {
                let event = DestinationEvent::of(EventKind::Disabled, &d, now);
                super::destination_rows::insert_event(conn, &event)?;
                tipped_ids.push(d.id);
            }
        }
    }
    super::destination_stats::count(conn, hours)?;
    // Each reported as the whole batch left it (a later finish of the
    // batch may have changed its streak since).
    for id in tipped_ids {
        if let Some(row) = destination_row(conn, &id)? {
            finished.disabled.push(AutoDisabled {
                destination: row.destination()?,
            });
        }
    }
    Ok(finished)
}

pub(super) fn hand_back(
    conn: &mut SqliteConnection,
    lease: &Lease,
    after: Option<Duration>,
    now: DateTime<Utc>,
) -> Result<TransitionOutcome, StoreError> {
    let mut task = match held(conn, lease, None)? {
        Ok(task) => task,
        Err(refusal) => return Ok(refusal),
    };
    let paused_until = destination_row(conn, &task.destination_id)?
        .map(|row| row.destination())
        .transpose()?
        .and_then(|d| d.paused_until);
    let outcome = lifecycle::hand_back(&mut task, after, paused_until, now);
    rows::write_task(conn, &task)?;
    Ok(outcome)
}

pub(super) fn extend(
    conn: &mut SqliteConnection,
    lease: &Lease,
    by: Duration,
    now: DateTime<Utc>,
) -> Result<TransitionOutcome, StoreError> {
    let mut task = match held(conn, lease, None)? {
        Ok(task) => task,
        Err(refusal) => return Ok(refusal),
    };
    lifecycle::extend(&mut task, by, now);
    rows::write_task(conn, &task)?;
    Ok(TransitionOutcome::Applied)
}

pub(super) fn replay(
    conn: &mut SqliteConnection,
    id: TaskId,
    horizon: Duration,
    now: DateTime<Utc>,
) -> Result<Replayed, StoreError> {
    let Some(mut task) = rows::task(conn, id)? else {
        return Ok(Replayed::NotFound);
    };
    let deleted = rows::destination_deleted(conn, &task.destination_id)?;
    if !lifecycle::replay(&mut task, horizon, deleted, now) {
        return Ok(Replayed::NotFailed(task));
    }
    rows::write_task(conn, &task)?;
    Ok(Replayed::Replayed(task))
}

pub(super) fn attempts(
    conn: &mut SqliteConnection,
    id: TaskId,
) -> Result<Vec<Attempt>, StoreError> {
    let rows: Vec<AttemptRow> = diesel::sql_query(format!(
        "SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE task_id = ? ORDER BY id"
    ))
    .bind::<Text, _>(id.0.to_string())
    .load(conn)?;
    rows.into_iter().map(Attempt::try_from).collect()
}

/// The failpoint between a finish's writes and its commit (see
/// docs/failpoints.md): a crash here must roll the finish back.
fn in_finish() -> Result<(), StoreError> {
    #[cfg(feature = "failpoints")]
    fail::fail_point!(crate::store::rules::IN_FINISH_FAILPOINT, |arg: Option<
        String,
    >| {
        if arg.as_deref() == Some("exit") {
            std::process::exit(crate::store::rules::CRASH_EXIT_CODE);
        }
        Err(StoreError::Query(
            diesel::result::Error::RollbackTransaction,
        ))
    });
    Ok(())
}
