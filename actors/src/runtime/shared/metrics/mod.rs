//! What a region's runtime exports on /metrics, through the Prometheus
//! project's client (`prometheus-client`): every series carries the region,
//! and those per destination fold every destination past
//! `metrics.max_destinations` into `other`, so label cardinality stays
//! bounded. No label ever carries a tenant, a reminder or payload bytes.

use std::collections::HashSet;

use parking_lot::Mutex;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use remit::domain::{AttemptOutcome, DestinationId, Region};

use super::metric_labels::{
    start_at_zero, ByActor, ByClass, ByDestination, ByOutcome, ByReason, ByState, ACTORS, CLASSES,
    OUTCOMES, REASONS, STATES,
};

/// The label of a destination past the limit.
pub const OTHER: &str = "other";

/// The families, registered once per runtime.
pub struct Metrics {
    registry: Registry,
    attempts: Family<ByOutcome, Counter>,
    responses: Family<ByClass, Counter>,
    rate_limited: Family<ByDestination, Counter>,
    failures: Family<ByReason, Counter>,
    claimed: Counter,
    reclaimed: Counter,
    released: Counter,
    fenced: Family<ByDestination, Counter>,
    throttle_waits: Family<ByDestination, Counter>,
    pauses: Family<ByDestination, Counter>,
    refusals: Family<ByDestination, Counter>,
    quota_remaining: Family<ByDestination, Gauge>,
    auto_disabled: Counter,
    restarts: Family<ByActor, Counter>,
    in_memory: Gauge,
    depth: Family<ByState, Gauge>,
    oldest_eligible: Gauge<f64, std::sync::atomic::AtomicU64>,
    expired_leases: Gauge,
    disabled_destinations: Gauge,
    queue_read_at: Gauge<f64, std::sync::atomic::AtomicU64>,
    deadline_to_delivery: Histogram,
    console_sign_ins_refused: Counter,
    cancelled: Counter,
    erased: Counter,
    rescheduled: Counter,
    named: Mutex<HashSet<DestinationId>>,
    /// Whether `other` has been given out (and its series exported).
    other: std::sync::atomic::AtomicBool,
    max_destinations: usize,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

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

    /// Exports a destination's series at 0 when it gets its label.
    fn zero(&self, destination: &str) {
        let by = || ByDestination {
            destination: destination.to_owned(),
        };
        for outcome in OUTCOMES {
            drop(self.attempts.get_or_create(&ByOutcome {
                destination: destination.to_owned(),
                outcome: outcome.as_str().to_owned(),
            }));
        }
        drop(self.rate_limited.get_or_create(&by()));
        drop(self.fenced.get_or_create(&by()));
        drop(self.throttle_waits.get_or_create(&by()));
        drop(self.pauses.get_or_create(&by()));
        drop(self.refusals.get_or_create(&by()));
    }

    /// The destination's label: its id for the first `max_destinations`
    /// seen, `other` after.
    fn destination(&self, id: &DestinationId) -> String {
        let mut named = self.named.lock();
        if named.contains(id) {
            return id.to_string();
        }
        if named.len() < self.max_destinations {
            named.insert(id.clone());
            self.zero(id.as_str());
            return id.to_string();
        }
        if !self.other.swap(true, std::sync::atomic::Ordering::Relaxed) {
            self.zero(OTHER);
        }
        OTHER.to_owned()
    }

    pub fn attempt(&self, destination: &DestinationId, outcome: AttemptOutcome) {
        self.attempts
            .get_or_create(&ByOutcome {
                destination: self.destination(destination),
                outcome: outcome.as_str().to_owned(),
            })
            .inc();
    }

    /// A receiver's answer (`None`: no answer, a transport failure).
    pub fn response(&self, destination: &DestinationId, status: Option<u16>) {
        let class = match status {
            None => "transport".to_owned(),
            Some(s) => format!("{}xx", (s / 100).clamp(1, 5)),
        };
        self.responses.get_or_create(&ByClass { class }).inc();
        if status == Some(429) {
            self.rate_limited
                .get_or_create(&ByDestination {
                    destination: self.destination(destination),
                })
                .inc();
        }
    }

    /// A terminal failure; `reason` is a `FailureReason::code()`, whose
    /// values are few (`http_<status>` is bounded by the status codes).
    pub fn failed(&self, reason: &str) {
        self.failures
            .get_or_create(&ByReason {
                reason: reason.to_owned(),
            })
            .inc();
    }

    /// A claim's take: `n` tasks, `reclaimed` of them expired leases.
    pub fn claimed(&self, n: u64, reclaimed: u64) {
        self.claimed.inc_by(n);
        self.reclaimed.inc_by(reclaimed);
    }

    /// A finish of this process disabled a destination.
    pub fn auto_disabled(&self) {
        self.auto_disabled.inc();
    }

    /// Tasks this process cancelled, erased or moved for an operator.
    pub fn cancelled(&self, n: u64) {
        self.cancelled.inc_by(n);
    }

    pub fn erased(&self, n: u64) {
        self.erased.inc_by(n);
    }

    pub fn rescheduled(&self) {
        self.rescheduled.inc();
    }

    pub fn released(&self) {
        self.released.inc();
    }

    pub fn fenced(&self, destination: &DestinationId) {
        self.fenced
            .get_or_create(&ByDestination {
                destination: self.destination(destination),
            })
            .inc();
    }

    pub fn throttle_wait(&self, destination: &DestinationId) {
        self.throttle_waits
            .get_or_create(&ByDestination {
                destination: self.destination(destination),
            })
            .inc();
    }

    pub fn paused(&self, destination: &DestinationId) {
        self.pauses
            .get_or_create(&ByDestination {
                destination: self.destination(destination),
            })
            .inc();
    }

    /// A receiver announced how many requests it accepts until its quota
    /// resets (after clamping).
    pub fn quota_announced(&self, destination: &DestinationId, remaining: u64) {
        self.quota_remaining
            .get_or_create(&ByDestination {
                destination: self.destination(destination),
            })
            .set(i64::try_from(remaining).unwrap_or(i64::MAX));
    }

    pub fn refused(&self, destination: &DestinationId) {
        self.refusals
            .get_or_create(&ByDestination {
                destination: self.destination(destination),
            })
            .inc();
    }

    /// `actor` is the kind (`sender`, `throttle`, …), never an instance.
    pub fn restarted(&self, actor: &'static str) {
        self.restarts
            .get_or_create(&ByActor {
                actor: actor.to_owned(),
            })
            .inc();
    }

    /// A first delivery, `late` after its deadline (a replayed task's
    /// deadline is long past, and would only say when it was replayed).
    pub fn delivered_after_deadline(&self, late: chrono::Duration) {
        let seconds = late.num_milliseconds().max(0) as f64 / 1000.0;
        self.deadline_to_delivery.observe(seconds);
    }

    /// The counter the console's sign-in limit counts its refusals in.
    pub fn console_sign_ins_refused(&self) -> Counter {
        self.console_sign_ins_refused.clone()
    }

    pub fn set_in_memory(&self, held: usize) {
        self.in_memory.set(i64::try_from(held).unwrap_or(i64::MAX));
    }

    /// The periodic query's answer.
    pub fn set_queue(&self, queue: &remit::store::RegionStatus) {
        for (state, n) in STATES
            .into_iter()
            .zip([queue.pending, queue.leased, queue.retry_wait])
        {
            self.depth
                .get_or_create(&ByState {
                    state: state.to_owned(),
                })
                .set(n);
        }
        self.expired_leases.set(queue.expired_leases);
        self.disabled_destinations.set(queue.disabled_destinations);
        let age = queue
            .oldest_eligible
            .map_or(0.0, |d| d.num_milliseconds().max(0) as f64 / 1000.0);
        self.oldest_eligible.set(age);
        self.queue_read_at
            .set(chrono::Utc::now().timestamp_millis() as f64 / 1000.0);
    }

    /// The Prometheus text exposition of every family.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
