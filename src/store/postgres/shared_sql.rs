//! SQL fragments several statements share, as macros so that each
//! statement stays one `concat!`ed constant: what a replay writes on a
//! failed row, and the task behind an end row.

/// What a replay writes on a failed row (`t`), beside a `clock` CTE: the
/// one-task replay and the bulk replay's batches share it, so they follow
/// the same rule. `$horizon` is the parameter holding the fresh horizon in
/// milliseconds.
macro_rules! replay_set {
    ($horizon:literal) => {
        concat!(
            "SET state = 'pending',
    available_at = GREATEST(clock.now, t.not_before),
    retry_horizon_at = GREATEST(clock.now, t.not_before) + ",
            $horizon,
            " * interval '1 millisecond',
    attempts_before_replay = t.attempt_count,
    failure_reason = NULL,
    finalized_at = NULL,
    updated_at = clock.now"
        )
    };
}

/// The task behind each end row `e` of `task_ends`, as `t` (the columns the
/// reports read): one probe by primary key per end row, and only while the
/// end row is its task's latest (a replayed task that ended again has a
/// newer one). OFFSET 0 keeps the planner from making it a join, which over
/// a long window it would answer by reading all of `tasks`.
macro_rules! ended_task {
    () => {
        " CROSS JOIN LATERAL (
    SELECT t.state, t.failure_reason, t.destination_id, t.not_before, t.delivered_at,
           t.finalized_at
    FROM tasks t WHERE t.id = e.task_id AND t.finalized_at = e.finalized_at
    OFFSET 0) t"
    };
}
