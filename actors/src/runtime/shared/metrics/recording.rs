//! `Metrics`: what the runtime records as it goes, each series folded
//! into `other` past the destinations it may name.

use std::collections::HashSet;

use parking_lot::Mutex;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use remit::domain::{AttemptOutcome, DestinationId};

use super::labels::{
    ByActor, ByClass, ByDestination, ByOutcome, ByReason, ByState, OUTCOMES, STATES,
};

/// The label of a destination past the limit.
pub const OTHER: &str = "other";

/// The families, registered once per runtime.
pub struct Metrics {
    pub(super) registry: Registry,
    pub(super) attempts: Family<ByOutcome, Counter>,
    pub(super) responses: Family<ByClass, Counter>,
    pub(super) rate_limited: Family<ByDestination, Counter>,
    pub(super) failures: Family<ByReason, Counter>,
    pub(super) claimed: Counter,
    pub(super) reclaimed: Counter,
    pub(super) released: Counter,
    pub(super) fenced: Family<ByDestination, Counter>,
    pub(super) throttle_waits: Family<ByDestination, Counter>,
    pub(super) pauses: Family<ByDestination, Counter>,
    pub(super) refusals: Family<ByDestination, Counter>,
    pub(super) quota_remaining: Family<ByDestination, Gauge>,
    pub(super) auto_disabled: Counter,
    pub(super) restarts: Family<ByActor, Counter>,
    pub(super) in_memory: Gauge,
    pub(super) depth: Family<ByState, Gauge>,
    pub(super) oldest_eligible: Gauge<f64, std::sync::atomic::AtomicU64>,
    pub(super) expired_leases: Gauge,
    pub(super) disabled_destinations: Gauge,
    pub(super) queue_read_at: Gauge<f64, std::sync::atomic::AtomicU64>,
    pub(super) deadline_to_delivery: Histogram,
    pub(super) console_sign_ins_refused: Counter,
    pub(super) cancelled: Counter,
    pub(super) erased: Counter,
    pub(super) rescheduled: Counter,
    pub(super) late_found: Counter,
    pub(super) horizons_ending_found: Counter,
    pub(super) replica_lag: Gauge<f64, std::sync::atomic::AtomicU64>,
    pub(super) named: Mutex<HashSet<DestinationId>>,
    /// Whether `other` has been given out (and its series exported).
    pub(super) other: std::sync::atomic::AtomicBool,
    pub(super) max_destinations: usize,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
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

    /// What one alert check of this process found: reminders late against
    /// their deadline, and reminders near the end of their retry horizon
    /// (each found once in the region, by whichever process checked).
    pub fn alert_check_found(&self, late: u32, horizons_ending: u32) {
        self.late_found.inc_by(u64::from(late));
        self.horizons_ending_found
            .inc_by(u64::from(horizons_ending));
    }

    /// How far the replica the reports read is behind its primary (0 when
    /// caught up, or when the reports read the primary).
    pub fn set_replica_lag(&self, lag: Option<chrono::Duration>) {
        let seconds = lag.map_or(0.0, |d| d.num_milliseconds().max(0) as f64 / 1000.0);
        self.replica_lag.set(seconds);
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
