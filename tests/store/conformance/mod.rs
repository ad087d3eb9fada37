//! The store conformance suite: one set of cases, run against every
//! `Store` implementation (PostgreSQL, SQLite and the in-memory model), so
//! the embedded store and the model the simulation explores behave exactly
//! like PostgreSQL.

mod cases;

use chrono::{DateTime, Duration, Utc};
use remit::domain::{Actor, Task, TaskId};
use remit::payload_crypto::PayloadKey;
use remit::store::{
    Alerts, Changes, Clock, Database, Destinations, Jobs, Keys, MemStore, Reports, Schedule, Store,
    Transfer,
};

use crate::support::{t0, test_key, Backend, TestDb};

/// A store under test and the clock it reads.
pub trait Harness: Sized {
    type S: Store + Jobs + Transfer + Keys + Reports + Changes + Destinations + Alerts + Sync;
    fn store(&self) -> &Self::S;
    /// The same store, its admin calls recorded as `actor`'s.
    fn acting_as(&self, actor: Actor) -> Self::S;
    fn clock(&self) -> &Clock;
    /// A store sharing this one's data but holding another payload key.
    fn with_key(&self, key: PayloadKey) -> impl std::future::Future<Output = Self::S>;
    /// Another store of the same kind, empty, with its own clock pinned
    /// at `t0`: where an export is imported.
    fn another_empty(&self) -> impl std::future::Future<Output = Self>;
    /// Moves a task's deadline (`not_before`, and `available_at` and the
    /// horizon with it) to `at`, whatever its state, bypassing every rule:
    /// the row a hand edit or an import from an older remit could leave.
    fn move_deadline(&self, id: TaskId, at: DateTime<Utc>)
        -> impl std::future::Future<Output = ()>;
}

impl Harness for TestDb {
    type S = Database;
    fn store(&self) -> &Database {
        &self.store
    }
    fn acting_as(&self, actor: Actor) -> Database {
        self.store.acting_as(actor)
    }
    fn clock(&self) -> &Clock {
        self.store.clock()
    }
    async fn with_key(&self, key: PayloadKey) -> Database {
        self.another_store(key).await
    }
    async fn another_empty(&self) -> Self {
        TestDb::on(self.backend()).await
    }
    async fn move_deadline(&self, id: TaskId, at: DateTime<Utc>) {
        let horizon = at + Duration::days(3);
        let sql = match self.backend() {
            Backend::Postgres => format!(
                "UPDATE tasks SET not_before = '{}', available_at = '{}', \
                 retry_horizon_at = '{}' WHERE id = '{}'",
                at.to_rfc3339(),
                at.to_rfc3339(),
                horizon.to_rfc3339(),
                id
            ),
            Backend::Sqlite => format!(
                "UPDATE tasks SET not_before = {}, available_at = {}, \
                 retry_horizon_at = {} WHERE id = '{}'",
                at.timestamp_micros(),
                at.timestamp_micros(),
                horizon.timestamp_micros(),
                id
            ),
        };
        assert_eq!(self.execute(&sql).await, 1, "{sql}");
    }
}

pub struct Memory(MemStore);

impl Memory {
    async fn new() -> Self {
        Memory(MemStore::new(test_key(), Clock::pinned(t0())))
    }
}

impl Harness for Memory {
    type S = MemStore;
    fn store(&self) -> &MemStore {
        &self.0
    }
    fn acting_as(&self, actor: Actor) -> MemStore {
        self.0.acting_as(actor)
    }
    fn clock(&self) -> &Clock {
        self.0.clock()
    }
    async fn with_key(&self, key: PayloadKey) -> MemStore {
        self.0.with_key(key)
    }
    async fn another_empty(&self) -> Self {
        Memory::new().await
    }
    async fn move_deadline(&self, id: TaskId, at: DateTime<Utc>) {
        let task = self.0.task(id).await.unwrap().unwrap();
        let moved = Task {
            not_before: at,
            available_at: at,
            retry_horizon_at: at + Duration::days(3),
            ..task
        };
        assert!(self.0.overwrite_task(moved));
    }
}

macro_rules! conformance {
    ($module:ident, $make:expr, [$($case:ident),* $(,)?]) => {
        mod $module {
            use super::*;
            $(
                #[tokio::test]
                async fn $case() {
                    let harness = $make.await;
                    cases::$case(&harness).await;
                }
            )*
        }
    };
}

macro_rules! every_store {
    ($($case:ident),* $(,)?) => {
        conformance!(postgres, TestDb::new(), [$($case),*]);
        conformance!(sqlite, TestDb::sqlite(), [$($case),*]);
        conformance!(memory, Memory::new(), [$($case),*]);
    };
}

every_store!(
    a_change_keeps_resets_or_sets_each_setting,
    a_change_of_url_is_read_and_sent_to,
    headers_are_replaced_whole_and_secrets_never_shown,
    a_secret_header_never_follows_the_url_to_another_origin,
    a_missing_or_deleted_destination_is_not_changed,
    a_destination_with_live_tasks_is_deleted_only_with_them,
    a_deleted_id_registered_again_comes_back_clean,
    an_export_carries_settings_headers_and_tombstones,
    a_rekey_reseals_secret_headers,
    failed_tasks_are_announced_once_each_and_coalesced,
    without_a_receiver_failures_are_dropped,
    events_receivers_are_never_reported_on,
    late_reminders_are_announced_once_and_prompt_ones_never,
    horizons_about_to_end_are_announced_while_live,
    what_enters_behind_the_checks_is_announced,
    a_failing_destination_is_announced_at_each_level_once_then_recovered,
    a_disabled_destination_is_not_announced_failing,
    claims_respect_deadlines_and_available_at,
    an_expired_lease_is_reclaimed_and_logged,
    an_expired_lease_is_not_reclaimed_before_its_deadline,
    a_stale_lease_changes_nothing,
    finishes_are_idempotent_for_their_own_lease,
    release_abandon_and_extend,
    pauses_hold_a_destination,
    claims_are_capped_and_round_robin,
    a_destination_takes_no_more_than_its_own_cap,
    regions_are_isolated,
    scheduling_is_idempotent_and_validated,
    the_token_bucket_is_shared,
    many_buckets_are_taken_from_at_once,
    replay_and_reconcile,
    replay_keeps_attempt_numbers_rising,
    a_hand_back_waits_for_the_pause_and_ends_a_tried_task_at_the_horizon,
    a_claim_skips_the_destinations_it_names,
    a_batch_answers_each_task_as_schedule_would,
    a_repeat_that_cannot_be_opened_fails_alone,
    a_batch_of_finishes_is_fenced_row_by_row,
    a_pause_of_an_unknown_destination_does_not_stop_the_finish,
    claims_take_turns_over_the_destinations,
    tenants_take_turns_within_a_destination,
    prune_takes_old_terminal_tasks_and_leaves_the_rest,
    prune_goes_in_batches_up_to_the_cutoff,
    prune_refuses_bad_requests,
    a_reminder_keeps_its_key_after_pruning,
    a_send_target_carries_the_secret_and_the_pause_left,
    many_send_targets_answer_as_one_does_in_order,
    ping_answers_and_changes_nothing,
    one_finish_applies_each_kind_of_decision,
    reconcile_compares_the_schedule_with_a_ledger,
    an_api_token_is_stored_as_made_and_once,
    an_api_token_is_found_by_its_hash_only,
    api_tokens_are_listed_oldest_first,
    a_revocation_is_kept_and_found,
    a_rotation_keeps_the_old_secret_until_its_end,
    a_rotation_keeps_a_sooner_end,
    secrets_of_an_unknown_destination_are_not_found,
    many_send_targets_carry_each_destinations_secrets,
    a_failure_streak_disables_its_destination_in_the_finish,
    pacing_does_not_count_and_a_success_ends_the_streak,
    the_last_error_stays_until_a_success,
    failures_that_tip_then_a_success_in_one_batch_disable,
    a_success_then_failures_that_tip_in_one_batch_disable,
    an_operator_disables_and_enables_a_destination,
    a_disabled_destinations_tasks_fail_at_their_horizon,
    a_line_behind_a_disabled_destinations_lapsed_head_moves_on,
    disables_and_enables_leave_events_in_the_outbox,
    next_due_follows_deadlines_leases_pauses_and_regions,
    next_due_never_precedes_a_deadline,
    a_line_goes_one_at_a_time_in_order,
    a_retry_holds_the_line_behind_it,
    an_expired_lease_of_a_head_is_reclaimed_and_its_line_waits,
    a_failed_head_lets_the_line_go_and_a_replay_takes_its_place,
    an_ordering_key_is_kept_and_part_of_a_repeat,
    an_earlier_task_never_goes_beside_a_head_in_flight,
    an_earlier_task_never_overtakes_a_sent_head_in_retry,
    next_due_ignores_tasks_waiting_in_a_line,
    a_task_keeps_the_traceparent_it_was_scheduled_with,
    an_announced_quota_paces_the_shared_bucket,
    a_generous_quota_never_raises_the_configured_rate,
    a_spent_quota_holds_until_its_reset_then_the_configured_rate_returns,
    the_newest_announcement_wins_and_unknown_destinations_are_skipped,
    requests_sent_after_the_answered_one_count_against_its_announcement,
    requests_sent_before_the_answered_one_are_not_counted_again,
    an_answer_to_an_earlier_request_never_replaces_a_later_ones,
    an_answer_to_a_request_sent_after_the_stored_one_was_learned_wins,
    in_one_batch_the_answer_to_the_latest_request_wins,
    a_quota_with_a_window_renews_once_at_its_reset,
    a_quota_renews_to_the_window_that_holds_now,
    a_replay_job_replays_exactly_the_matching_failed_tasks,
    a_replay_job_filters_by_reason_and_time,
    a_replay_job_is_refused_with_the_field_named,
    replay_jobs_are_listed_newest_first_and_count_only_what_they_replay,
    a_cancel_job_cancels_exactly_the_matching_tasks_not_ended,
    a_cancel_job_filters_by_reminder_and_time,
    a_cancel_job_is_refused_a_reason_or_no_filter,
    cancel_and_replay_jobs_are_listed_together_each_with_its_action,
    a_cancel_job_ending_a_lines_head_lets_the_line_go_on,
    an_export_imports_into_an_empty_store_unchanged,
    an_import_that_breaks_a_rule_or_conflicts_writes_nothing,
    a_ring_opens_the_old_and_seals_with_the_new,
    rekey_reseals_in_batches_and_forgets_the_old_key,
    a_key_no_process_holds_is_told_from_another_processs,
    an_erased_payload_opens_from_no_copy_once_its_key_is_retired,
    a_replaced_payload_gets_a_data_key_of_its_own,
    an_imported_secret_records_its_key,
    status_reads_the_queue,
    the_console_search_finds_tasks_by_each_field,
    the_console_search_pages_newest_first,
    destination_summaries_count_each_destinations_tasks,
    a_destination_summary_names_its_oldest_wait,
    a_replayed_failure_stays_in_the_reports,
    a_failure_settled_into_a_cancel_still_counts,
    activity_counts_the_last_hour_by_minute,
    status_lists_refusals_disabled_destinations_and_failures_most_first,
    a_search_page_is_held_within_one_and_max_page,
    activity_puts_each_end_in_the_minute_it_closes,
    a_destination_summary_carries_its_learned_quota,
    a_search_takes_its_instants_to_the_microsecond,
    a_waiting_task_is_cancelled_and_never_claimed,
    a_cancel_in_flight_waits_for_the_attempt_and_wins_over_a_retry,
    a_cancel_in_flight_lapses_when_the_attempt_delivers,
    a_cancel_after_a_lease_ran_out_logs_the_lost_attempt,
    delivered_and_failed_tasks_are_not_cancelled,
    a_reschedule_moves_the_deadline_and_keeps_the_key,
    a_failed_or_cancelled_task_comes_back_when_rescheduled,
    a_reschedule_in_flight_waits_and_a_delivered_task_is_refused,
    erase_drops_the_payload_keeps_the_record_and_cancels,
    a_tenants_erasure_goes_in_rounds,
    retry_now_brings_waiting_retries_forward,
    a_cancel_racing_a_claim_never_lets_a_cancelled_task_go,
    a_reschedule_racing_a_claim_leaves_one_version,
    changes_never_revive_what_was_cancelled_or_erased,
    only_a_caller_who_may_replay_brings_an_ended_task_back,
    a_move_that_waited_lapses_when_the_attempt_fails_the_task,
    a_deleted_destinations_task_is_never_moved,
    each_admin_call_writes_one_entry_as_its_actor,
    the_task_changes_write_one_entry_each,
    a_refused_or_rolled_back_action_writes_no_entry,
    imports_and_a_rekey_are_recorded_and_a_plain_handle_is_system,
    the_audit_log_pages_newest_first_and_filters,
    audit_retention_deletes_only_old_entries,
    finishes_count_into_their_destinations_hour_by_class,
    percentiles_come_from_known_latencies_across_batches,
    attempts_without_an_exchange_count_nothing,
    old_hours_are_pruned_region_by_region,
);
