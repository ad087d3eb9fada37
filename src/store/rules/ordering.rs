//! Order where a receiver needs it, written once for the stores that
//! choose in code (the model and SQLite); PostgreSQL's claim statement
//! (`postgres/leases/claim.sql`) makes the same choice in SQL.
//!
//! Tasks of one destination with the same `ordering_key` form a line,
//! ordered by `not_before`, then by id (ids are time-ordered, so the order
//! of scheduling), except that a task already attempted (sent, or taken to
//! be sent: `attempt_count > 0`) comes before every task of its line not
//! yet attempted. Only a line's head is claimable: a task waits while any
//! other task of its line that has not ended comes before it, whether that
//! one is pending, leased or in `retry_wait`. The exception keeps a line to
//! one task in flight: a task scheduled later with an earlier `not_before`,
//! or whose scheduling committed after a later one was claimed, waits for
//! the one already on its way instead of going beside it. So a retry, a Retry-After
//! included, holds the tasks behind it, and an expired lease of the head is
//! reclaimed as usual while the rest wait. A task without a key is in no
//! line.
//!
//! A replayed task was attempted before, so it goes ahead of the tasks
//! of its line not yet attempted; one already in flight finishes its
//! attempt (a send cannot be called back), and may have the replay beside
//! it when it comes later in (`not_before`, id).

use crate::domain::Task;

/// Whether `earlier` holds `task` back: both in the same line, `earlier`
/// not ended and before `task`.
pub(in crate::store) fn blocks(earlier: &Task, task: &Task) -> bool {
    let before = (earlier.not_before, earlier.id) < (task.not_before, task.id);
    task.ordering_key.is_some()
        && earlier.id != task.id
        && earlier.ordering_key == task.ordering_key
        && earlier.destination_id == task.destination_id
        && earlier.finalized_at.is_none()
        && match (earlier.attempt_count > 0, task.attempt_count > 0) {
            (true, false) => true,
            (false, true) => false,
            _ => before,
        }
}

/// Whether `task` waits in its line behind one of `tasks` (which may
/// include `task` itself).
pub(in crate::store) fn waits<'a>(task: &Task, tasks: impl IntoIterator<Item = &'a Task>) -> bool {
    task.ordering_key.is_some() && tasks.into_iter().any(|earlier| blocks(earlier, task))
}

/// The same rule as SQL over the SQLite `tasks` table, for a row named
/// `t`: true when the row may go. Binds nothing.
pub(in crate::store) const SQL_MAY_GO: &str = "(t.ordering_key IS NULL OR CASE \
    WHEN t.attempt_count > 0 THEN NOT EXISTS ( \
      SELECT 1 FROM tasks e \
      WHERE e.destination_id = t.destination_id \
        AND e.ordering_key IS NOT NULL AND e.ordering_key = t.ordering_key \
        AND e.finalized_at IS NULL AND e.attempt_count > 0 \
        AND (e.not_before, e.id) < (t.not_before, t.id)) \
    WHEN EXISTS ( \
      SELECT 1 FROM tasks e \
      WHERE e.destination_id = t.destination_id \
        AND e.ordering_key IS NOT NULL AND e.ordering_key = t.ordering_key \
        AND e.finalized_at IS NULL \
        AND (e.not_before, e.id) < (t.not_before, t.id)) THEN 0 \
    ELSE NOT EXISTS ( \
      SELECT 1 FROM tasks e \
      WHERE e.destination_id = t.destination_id \
        AND e.ordering_key IS NOT NULL AND e.ordering_key = t.ordering_key \
        AND e.finalized_at IS NULL AND e.attempt_count > 0) \
    END)";

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone, Utc};

    use super::*;
    use crate::domain::{DestinationId, OrderingKey, TaskId, TaskState};

    fn task(n: u128, key: Option<&str>, not_before_min: i64) -> Task {
        let now = Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 0).unwrap();
        let mut t = Task::leased_for_tests(now, Duration::seconds(30), Duration::hours(1), 1);
        t.id = TaskId(uuid::Uuid::from_u128(n));
        t.state = TaskState::Pending;
        t.not_before = now + Duration::minutes(not_before_min);
        t.ordering_key = key.map(|k| OrderingKey::new(k).unwrap());
        t
    }

    #[test]
    fn only_an_earlier_live_task_of_the_same_line_holds_a_task_back() {
        let head = task(1, Some("p1"), 0);
        let next = task(2, Some("p1"), 0);
        assert!(blocks(&head, &next));
        assert!(!blocks(&next, &head), "a later id comes after");
        assert!(!blocks(&head, &head), "a task never waits for itself");

        let earlier_deadline = task(3, Some("p1"), -1);
        assert!(
            blocks(&earlier_deadline, &head),
            "not_before comes before the id"
        );

        let ended = Task {
            finalized_at: Some(head.not_before),
            state: TaskState::Failed,
            ..head.clone()
        };
        assert!(!blocks(&ended, &next));
        assert!(!blocks(&task(1, Some("p2"), 0), &next), "another key");
        assert!(!blocks(&task(1, None, 0), &next), "no key");
        let elsewhere = Task {
            destination_id: DestinationId::new("erp").unwrap(),
            ..head.clone()
        };
        assert!(!blocks(&elsewhere, &next), "another destination");
        assert!(
            !blocks(&head, &task(2, None, 0)),
            "a task without a key waits for nothing"
        );
    }

    #[test]
    fn a_task_waits_while_any_task_before_it_in_its_line_is_live() {
        let line = [
            task(1, Some("p1"), 0),
            task(2, Some("p1"), 0),
            task(3, Some("p1"), 0),
        ];
        assert!(!waits(&line[0], &line));
        assert!(waits(&line[1], &line));
        assert!(waits(&line[2], &line));
        assert!(!waits(&task(4, None, 0), &line));
    }
}
