//! Rows whose lease no one will finish: an expired lease handed back as
//! reconciliation does it, and the rows of a disabled destination, which no
//! claim takes, settled (an expired lease handed back, then failed at the
//! horizon). Each rule written once, as `lifecycle`'s are, and applied by
//! the model and SQLite to rows they read; PostgreSQL's statements
//! (`postgres/reconcile.rs`, `postgres/destinations.rs`) do the same in SQL.

use chrono::{DateTime, Utc};

use crate::domain::{Attempt, FailureReason, Task, TaskState};
use crate::store::rules::lifecycle::{abandoned, current_lease};

/// Fails an unleased row whose destination is disabled once its retry
/// horizon has passed: it could not be sent before it. False (and nothing
/// changed) for any other row.
fn fail_disabled(task: &mut Task, now: DateTime<Utc>) -> bool {
    let waiting = matches!(task.state, TaskState::Pending | TaskState::RetryWait);
    if !waiting || task.retry_horizon_at > now {
        return false;
    }
    task.state = TaskState::Failed;
    task.failure_reason = Some(FailureReason::DestinationDisabled.code());
    task.finalized_at = Some(now);
    task.updated_at = now;
    true
}

/// What settling a row of a disabled destination did.
pub(in crate::store) struct SettledDisabled {
    /// The expired lease it handed back, logged as `abandoned`.
    pub abandoned: Option<Attempt>,
    /// Whether it failed with `destination_disabled`.
    pub failed: bool,
}

/// Settles a row whose destination is disabled. No claim takes such a row,
/// so nothing else would ever touch an expired lease of it: the lease is
/// handed back as a claim would reclaim it (the lost attempt logged as
/// `abandoned`, the row `retry_wait`), and the row then fails at its
/// horizon like any unleased row of a disabled destination. A live lease,
/// or a row of any other state, is left alone.
pub(in crate::store) fn settle_disabled(task: &mut Task, now: DateTime<Utc>) -> SettledDisabled {
    let abandoned = lease_expired(task, now).then(|| reclaim(task, now));
    SettledDisabled {
        abandoned,
        failed: fail_disabled(task, now),
    }
}

/// Whether a lease has run out: reconciliation hands such rows back.
pub(in crate::store) fn lease_expired(task: &Task, now: DateTime<Utc>) -> bool {
    task.state == TaskState::Leased && task.lease_expires_at.is_some_and(|at| at <= now)
}

/// Hands an expired lease back (reconciliation): the lost attempt is logged
/// as `abandoned` and the row is due again at once.
pub(in crate::store) fn reclaim(task: &mut Task, now: DateTime<Utc>) -> Attempt {
    let old = current_lease(task);
    task.state = TaskState::RetryWait;
    task.lease_token = None;
    task.lease_owner = None;
    task.lease_expires_at = None;
    task.available_at = now.max(task.not_before);
    task.updated_at = now;
    abandoned(&old, now)
}
