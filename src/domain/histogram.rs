//! A fixed log-scale histogram of durations: what a destination's hour
//! keeps of its send latencies and of its lateness, so that hours (and
//! batches within an hour) merge by adding counts, and a percentile is
//! read off at query time.
//!
//! The buckets are the same everywhere (every store, every row): bucket 0
//! holds durations under 1 ms, bucket `k` (1 ≤ k ≤ 52) those from bound
//! `k − 1` up to bound `k`, where bound `j` is 1 ms × 2^(j/2) rounded to
//! the microsecond (1 ms, 1.414 ms, 2 ms, 2.828 ms, … 67,108.864 s), and
//! bucket 53 holds everything from 67,108.864 s (18.6 hours) on. Each
//! bucket spans a factor of √2: a percentile read as its bucket's upper
//! bound is at most 41% above the true value, never below it.

use std::sync::LazyLock;

use chrono::Duration;

/// Buckets of every histogram: under 1 ms, 52 of a factor √2 each, and
/// 18.6 hours or more.
pub const HISTOGRAM_BUCKETS: usize = 54;

/// The bucket bounds in microseconds, ascending: a duration of `us`
/// microseconds falls in the bucket numbered by how many bounds are at or
/// below it (PostgreSQL's `width_bucket(us, bounds)` says the same, and the
/// finish statement is given these very bounds).
pub fn bucket_bounds_us() -> &'static [i64] {
    static BOUNDS: LazyLock<Vec<i64>> = LazyLock::new(|| {
        (0..HISTOGRAM_BUCKETS - 1)
            .map(|j| (1000.0 * 2f64.powf(j as f64 / 2.0)).round() as i64)
            .collect()
    });
    &BOUNDS
}

/// The bucket a duration of `us` microseconds falls in (a negative one in
/// bucket 0).
pub fn bucket_of(us: i64) -> usize {
    bucket_bounds_us().partition_point(|bound| *bound <= us)
}

/// Counts of durations per bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    counts: [u32; HISTOGRAM_BUCKETS],
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            counts: [0; HISTOGRAM_BUCKETS],
        }
    }
}

impl Histogram {
    /// The histogram with these counts per bucket; `None` unless there is
    /// exactly one count per bucket (a row written by another layout).
    pub fn from_counts(counts: &[u32]) -> Option<Self> {
        Some(Self {
            counts: counts.try_into().ok()?,
        })
    }

    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// Durations counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|c| u64::from(*c)).sum()
    }

    pub fn add(&mut self, duration: Duration) {
        let us = duration.num_microseconds().unwrap_or(i64::MAX);
        let bucket = &mut self.counts[bucket_of(us)];
        *bucket = bucket.saturating_add(1);
    }

    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
            *mine = mine.saturating_add(theirs);
        }
    }

    /// The `q` quantile (0 < q ≤ 1) by nearest rank, as the upper bound of
    /// the bucket that holds it; the last bucket has none, and answers its
    /// lower bound (18.6 hours, "at least"). `None` when nothing is counted.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        let bucket = self.counts.iter().position(|c| {
            seen += u64::from(*c);
            seen >= rank
        })?;
        let bounds = bucket_bounds_us();
        let us = bounds.get(bucket).or(bounds.last()).copied()?;
        Some(Duration::microseconds(us))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_double_every_second_bucket() {
        let bounds = bucket_bounds_us();
        assert_eq!(bounds.len(), HISTOGRAM_BUCKETS - 1);
        assert_eq!(&bounds[..5], &[1000, 1414, 2000, 2828, 4000]);
        assert_eq!(bounds[20], 1_024_000);
        assert_eq!(*bounds.last().unwrap(), 67_108_864_000);
        assert!(bounds.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_duration_falls_in_the_bucket_below_the_first_bound_above_it() {
        assert_eq!(bucket_of(-5), 0);
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(999), 0);
        assert_eq!(bucket_of(1000), 1);
        assert_eq!(bucket_of(1413), 1);
        assert_eq!(bucket_of(1414), 2);
        assert_eq!(bucket_of(i64::MAX), HISTOGRAM_BUCKETS - 1);
    }

    #[test]
    fn quantiles_read_the_upper_bound_of_their_bucket() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile(0.5), None);
        for ms in [3, 3, 3, 3, 3, 3, 3, 3, 3, 3] {
            h.add(Duration::milliseconds(ms));
        }
        // 3 ms lies between 2.828 and 4 ms.
        assert_eq!(h.quantile(0.5), Some(Duration::milliseconds(4)));
        for _ in 0..90 {
            h.add(Duration::milliseconds(100));
        }
        // 100 ms lies between 90.510 and 128 ms: the median and p99 are
        // there; the lowest tenth is the 3 ms.
        assert_eq!(h.quantile(0.5), Some(Duration::milliseconds(128)));
        assert_eq!(h.quantile(0.99), Some(Duration::milliseconds(128)));
        assert_eq!(h.quantile(0.1), Some(Duration::milliseconds(4)));
        h.add(Duration::days(2));
        assert_eq!(
            h.quantile(1.0),
            Some(Duration::seconds(67_108) + Duration::microseconds(864_000))
        );
    }

    #[test]
    fn merging_adds_counts() {
        let mut a = Histogram::default();
        a.add(Duration::milliseconds(1));
        let mut b = Histogram::default();
        b.add(Duration::milliseconds(1));
        b.add(Duration::seconds(1));
        a.merge(&b);
        assert_eq!(a.total(), 3);
        assert_eq!(a.counts()[1], 2);
        assert_eq!(Histogram::from_counts(a.counts()), Some(a.clone()));
        assert_eq!(Histogram::from_counts(&[1, 2]), None);
    }
}
