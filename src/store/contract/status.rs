//! One screen of the schedule's health, read from the database alone
//! (`remit status`, and the gauges a runtime exports): counts by state per
//! region, how long the oldest eligible task has waited, expired leases,
//! paused and disabled destinations, where retries and 429s pile up, terminal failures
//! by reason, and how long after its deadline a task is delivered.

use chrono::{DateTime, Duration, Utc};

use crate::domain::{Destination, DestinationId, Region};

/// How many destinations each top list names.
pub const TOP: i64 = 10;

/// What `status` reports, as of `now` (the store's clock).
#[derive(Debug, Clone, PartialEq)]
pub struct StatusReport {
    pub now: DateTime<Utc>,
    pub regions: Vec<RegionStatus>,
    /// Destinations whose pause has not ended, with its end.
    pub paused: Vec<(DestinationId, Region, DateTime<Utc>)>,
    /// Destinations a runtime's address policy refused in the last
    /// [`REFUSED_RECENTLY`], their tasks held: why, and when last.
    pub refused: Vec<Refused>,
    /// Destinations disabled (by a failure streak or by hand), by id: why,
    /// since when, and the last error.
    pub disabled: Vec<Destination>,
    /// Destinations with the most tasks in `retry_wait`, most first.
    pub top_retry_wait: Vec<(DestinationId, i64)>,
    /// Destinations with the most 429 answers in the last hour.
    pub top_rate_limited: Vec<(DestinationId, i64)>,
    /// Moves into `failed` in the last day (a failure replayed since still
    /// counts), by reason, most first.
    pub failures_last_day: Vec<(String, i64)>,
    /// The same failures by destination: the [`TOP`] with the most, most
    /// first.
    pub failures_by_destination_last_day: Vec<(DestinationId, i64)>,
    /// From `not_before` to delivery, for tasks delivered in the last hour.
    pub deadline_to_delivery: Option<Latency>,
}

/// One region's tasks by state, as `status` counts them, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionCounts {
    pub now: DateTime<Utc>,
    pub counts: RegionStatus,
}

impl RegionCounts {
    /// `region`'s counts among `regions` (all zero when it has no task).
    pub(crate) fn of(now: DateTime<Utc>, region: Region, regions: Vec<RegionStatus>) -> Self {
        let counts = regions
            .into_iter()
            .find(|r| r.region == Some(region))
            .unwrap_or(RegionStatus {
                region: Some(region),
                ..RegionStatus::default()
            });
        Self { now, counts }
    }
}

/// A destination a runtime's address policy refuses to send to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub destination: DestinationId,
    pub region: Region,
    pub why: String,
    pub last: DateTime<Utc>,
}

/// How far back `remit status` lists refusals: a runtime records one at
/// every hold (a minute), so a destination no process refuses any more
/// drops off within this.
pub const REFUSED_RECENTLY: Duration = Duration::minutes(10);

/// One region's queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionStatus {
    pub region: Option<Region>,
    pub pending: i64,
    pub leased: i64,
    pub retry_wait: i64,
    pub delivered: i64,
    pub failed: i64,
    pub cancelled: i64,
    /// How long the oldest task that is due and not leased has waited
    /// since it became due.
    pub oldest_eligible: Option<Duration>,
    /// Leases that have run out and not been taken over yet.
    pub expired_leases: i64,
    /// The region's disabled destinations (read by the runtime's gauge
    /// query, `Database::queue`, only; the report lists them instead).
    pub disabled_destinations: i64,
}

/// Percentiles of a latency, over `count` tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Latency {
    pub count: i64,
    pub p50: Duration,
    pub p99: Duration,
}

impl Latency {
    /// The percentiles a statement computed (in microseconds) over `count`
    /// tasks; none when it had no task to compute them over.
    pub(crate) fn from_micros(count: i64, p50: Option<i64>, p99: Option<i64>) -> Option<Self> {
        match (p50, p99) {
            (Some(p50), Some(p99)) if count > 0 => Some(Latency {
                count,
                p50: Duration::microseconds(p50),
                p99: Duration::microseconds(p99),
            }),
            _ => None,
        }
    }

    /// The percentiles of `samples` (in microseconds), nearest rank.
    pub(crate) fn of(mut samples: Vec<i64>) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let rank = |p: f64| {
            let i = ((p * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1;
            Duration::microseconds(samples[i])
        };
        Some(Latency {
            count: samples.len() as i64,
            p50: rank(0.50),
            p99: rank(0.99),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_take_the_nearest_rank() {
        assert_eq!(Latency::of(Vec::new()), None);
        let one = Latency::of(vec![5]).unwrap_or_else(|| unreachable!());
        assert_eq!(
            (one.p50, one.p99),
            (Duration::microseconds(5), Duration::microseconds(5))
        );
        let hundred = Latency::of((1..=100).rev().collect()).unwrap_or_else(|| unreachable!());
        assert_eq!(hundred.count, 100);
        assert_eq!(hundred.p50, Duration::microseconds(50));
        assert_eq!(hundred.p99, Duration::microseconds(99));
    }
}
