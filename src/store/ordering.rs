//! Order where a receiver needs it, written once for the stores that
//! choose in code (the model and SQLite); PostgreSQL's claim statement
//! (`postgres/claim.sql`) makes the same choice in SQL.
//!
//! Tasks of one destination with the same `ordering_key` form a line,
//! ordered by `not_before`, then by id (ids are time-ordered, so the order
//! of scheduling). Only a line's head is claimable: a task waits while any
//! other task of its line that has not ended comes before it, whether that
//! one is pending, leased or in `retry_wait`. So a retry, a Retry-After
//! included, holds the tasks behind it, and an expired lease of the head is
//! reclaimed as usual while the rest wait. A task without a key is in no
//! line.
//!
//! A replayed task keeps its `not_before`, so it takes its old place: the
//! tasks of its line not yet claimed wait for it again, while one already
//! leased finishes its attempt (a send cannot be called back).

use crate::domain::Task;

/// Whether `earlier` holds `task` back: both in the same line, `earlier`
/// not ended and before `task`.
pub(super) fn holds_back(earlier: &Task, task: &Task) -> bool {
    task.ordering_key.is_some()
        && earlier.ordering_key == task.ordering_key
        && earlier.destination_id == task.destination_id
        && earlier.finalized_at.is_none()
        && (earlier.not_before, earlier.id) < (task.not_before, task.id)
}

/// Whether `task` waits in its line behind one of `tasks` (which may
/// include `task` itself).
pub(super) fn waits<'a>(task: &Task, tasks: impl IntoIterator<Item = &'a Task>) -> bool {
    task.ordering_key.is_some() && tasks.into_iter().any(|earlier| holds_back(earlier, task))
}

/// The same rule as SQL over the SQLite `tasks` table, for a row named
/// `t`: true when the row may go. Binds nothing.
pub(super) const SQL_MAY_GO: &str = "(t.ordering_key IS NULL OR NOT EXISTS ( \
    SELECT 1 FROM tasks e \
    WHERE e.destination_id = t.destination_id \
      AND e.ordering_key IS NOT NULL AND e.ordering_key = t.ordering_key \
      AND e.finalized_at IS NULL \
      AND (e.not_before, e.id) < (t.not_before, t.id)))";
