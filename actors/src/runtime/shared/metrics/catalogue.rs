//! Every family remit exports: its name, help and buckets, registered once
//! per runtime under the region's label, and the series whose labels are
//! known in advance started at 0, so an alert sees 0 rather than nothing.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use remit::domain::Region;

use parking_lot::Mutex;

use super::labels::{
    start_at_zero, ByActor, ByClass, ByReason, ByState, ACTORS, CLASSES, REASONS, STATES,
};
use super::recording::Metrics;

impl Metrics {
    pub fn new(region: Region, max_destinations: usize) -> Self {
        let mut registry = Registry::with_prefix_and_labels(
            "remit",
            [("region".into(), region.to_string().into())].into_iter(),
        );
        let metrics = Self {
            attempts: Family::default(),
            responses: Family::default(),
            rate_limited: Family::default(),
            failures: Family::default(),
            claimed: Counter::default(),
            reclaimed: Counter::default(),
            released: Counter::default(),
            fenced: Family::default(),
            throttle_waits: Family::default(),
            pauses: Family::default(),
            refusals: Family::default(),
            quota_remaining: Family::default(),
            auto_disabled: Counter::default(),
            restarts: Family::default(),
            in_memory: Gauge::default(),
            depth: Family::default(),
            oldest_eligible: Gauge::default(),
            expired_leases: Gauge::default(),
            disabled_destinations: Gauge::default(),
            queue_read_at: Gauge::default(),
            // Bounds an alert can name exactly, 50 ms to 6 hours.
            deadline_to_delivery: Histogram::new([
                0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0,
                1800.0, 3600.0, 7200.0, 21600.0,
            ]),
            console_sign_ins_refused: Counter::default(),
            cancelled: Counter::default(),
            erased: Counter::default(),
            rescheduled: Counter::default(),
            late_found: Counter::default(),
            horizons_ending_found: Counter::default(),
            replica_lag: Gauge::default(),
            named: Mutex::default(),
            other: std::sync::atomic::AtomicBool::new(false),
            max_destinations,
            registry: Registry::default(),
        };
        registry.register(
            "attempts",
            "Attempts ended, by destination and outcome (delivered, retry_wait, failed, fenced, abandoned)",
            metrics.attempts.clone(),
        );
        registry.register(
            "responses",
            "Receiver answers by status class (2xx, 3xx, 4xx, 5xx) or transport (no answer)",
            metrics.responses.clone(),
        );
        registry.register(
            "rate_limited",
            "429 answers, by destination",
            metrics.rate_limited.clone(),
        );
        registry.register(
            "terminal_failures",
            "Tasks that ended failed, by reason",
            metrics.failures.clone(),
        );
        registry.register(
            "claimed",
            "Tasks this process claimed",
            metrics.claimed.clone(),
        );
        registry.register(
            "released",
            "Tasks this process handed back unsent (paused, throttled, shutting down)",
            metrics.released.clone(),
        );
        registry.register(
            "destinations_disabled",
            "The region's disabled destinations (by a failure streak or by hand), from the periodic queue query",
            metrics.disabled_destinations.clone(),
        );
        registry.register(
            "destinations_auto_disabled",
            "Destinations this process's finishes disabled after a failure streak",
            metrics.auto_disabled.clone(),
        );
        registry.register(
            "reclaimed_leases",
            "Expired leases this process took over",
            metrics.reclaimed.clone(),
        );
        registry.register(
            "fenced_writes",
            "Finishes refused because the lease had moved on, by destination",
            metrics.fenced.clone(),
        );
        registry.register(
            "throttle_waits",
            "Times a destination's throttle waited for tokens or for a free slot under its in-flight cap",
            metrics.throttle_waits.clone(),
        );
        registry.register(
            "destination_pauses",
            "Pauses this process learnt of (its own 429s and others'), by destination",
            metrics.pauses.clone(),
        );
        registry.register(
            "address_refusals",
            "Tasks handed back unsent because this process's address policy (send.allow_hosts, the refused ranges, plain http) refuses their destination's URL, by destination",
            metrics.refusals.clone(),
        );
        registry.register(
            "destination_quota_remaining",
            "Requests the destination's receiver last announced it accepts before its quota resets (RateLimit or X-RateLimit-Remaining, clamped), as this process saw it; absent until one announces",
            metrics.quota_remaining.clone(),
        );
        registry.register(
            "actor_restarts",
            "Actors restarted by a supervisor, by kind of actor",
            metrics.restarts.clone(),
        );
        registry.register(
            "tasks_in_memory",
            "Claimed tasks this process holds (queued or being sent)",
            metrics.in_memory.clone(),
        );
        registry.register(
            "tasks",
            "Live tasks of the region by state (pending, leased, retry_wait), from a periodic query",
            metrics.depth.clone(),
        );
        registry.register(
            "oldest_eligible_age_seconds",
            "How long the region's oldest task a claim would take now (due, unleased, its destination enabled and not paused) has waited, from a periodic query (0 when none)",
            metrics.oldest_eligible.clone(),
        );
        registry.register(
            "expired_leases",
            "Leases of the region that ran out and were not yet taken over, from a periodic query",
            metrics.expired_leases.clone(),
        );
        registry.register(
            "queue_read_timestamp_seconds",
            "When the queue gauges were last read from the database (Unix time): stale gauges are a signal too",
            metrics.queue_read_at.clone(),
        );
        registry.register(
            "deadline_to_delivery_seconds",
            "From a task's not_before to its confirmed delivery",
            metrics.deadline_to_delivery.clone(),
        );
        registry.register(
            "console_sign_ins_refused",
            "Console sign-ins refused (429) because their client address failed too many recently (console.sign_in_failures)",
            metrics.console_sign_ins_refused.clone(),
        );
        registry.register(
            "tasks_cancelled",
            "Tasks this process's API ended cancelled at once (by a cancel or a tenant's erasure); cancels applied after an attempt are not counted",
            metrics.cancelled.clone(),
        );
        registry.register(
            "payloads_erased",
            "Task payloads erased through this process",
            metrics.erased.clone(),
        );
        registry.register(
            "reminders_late_found",
            "Reminders the region's alert check found late against their deadline (events.late_after_seconds); counted where the check runs (events.url set)",
            metrics.late_found.clone(),
        );
        registry.register(
            "reminders_horizon_ending_found",
            "Reminders the region's alert check found within events.horizon_warning_seconds of the end of their retry horizon; counted where the check runs (events.url set)",
            metrics.horizons_ending_found.clone(),
        );
        registry.register(
            "read_replica_lag_seconds",
            "How far the replica the reports read (database.read_url) is behind its primary, from a periodic query; 0 when caught up or when no replica is set",
            metrics.replica_lag.clone(),
        );
        registry.register(
            "tasks_rescheduled",
            "Tasks moved to a new deadline through this process",
            metrics.rescheduled.clone(),
        );
        // Known label values start at 0, so an alert sees 0, not "absent".
        start_at_zero(
            &metrics.responses,
            CLASSES.map(|class| ByClass {
                class: class.into(),
            }),
        );
        start_at_zero(
            &metrics.failures,
            REASONS.map(|reason| ByReason {
                reason: reason.into(),
            }),
        );
        start_at_zero(
            &metrics.restarts,
            ACTORS.map(|actor| ByActor {
                actor: actor.into(),
            }),
        );
        start_at_zero(
            &metrics.depth,
            STATES.map(|state| ByState {
                state: state.into(),
            }),
        );
        Self {
            registry,
            ..metrics
        }
    }
}
