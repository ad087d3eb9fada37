//! What each destination's deliveries came to since the last summary line:
//! at `info`, remit logs no line per delivery or retry (a busy region sends
//! thousands a minute), but one line per destination with work every
//! `log.summary_seconds`. Terminal failures, fenced finishes, disables,
//! pauses and restarts are still logged one by one where they happen.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use parking_lot::Mutex;
use remit::domain::DestinationId;
use slog::info;

/// One destination's counts over a summary's period.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    pub delivered: u64,
    /// Attempts that will be tried again (a 429 among them).
    pub retried: u64,
    /// Of those, answers 429.
    pub rate_limited: u64,
    pub failed: u64,
    pub fenced: u64,
    /// Claimed tasks handed back unsent (paused, throttled, changed).
    pub handed_back: u64,
    /// The last retried attempt's status, or its transport error.
    pub last_status: Option<u16>,
    pub last_error: Option<String>,
}

/// The tallies of every destination with work since the last line, and
/// when that was.
#[derive(Debug)]
pub struct DeliverySummary {
    tallies: Mutex<BTreeMap<DestinationId, Tally>>,
    since: Mutex<Instant>,
    /// No summary is logged (`log.summary_seconds = 0`): nothing is
    /// counted, so no tally grows unread.
    off: AtomicBool,
}

impl Default for DeliverySummary {
    fn default() -> Self {
        Self {
            tallies: Mutex::default(),
            since: Mutex::new(Instant::now()),
            off: AtomicBool::new(false),
        }
    }
}

impl DeliverySummary {
    /// Stops counting, for a runtime that logs no summary.
    pub fn turn_off(&self) {
        self.off.store(true, Ordering::Relaxed);
    }

    fn count(&self, destination: &DestinationId, add: impl FnOnce(&mut Tally)) {
        if self.off.load(Ordering::Relaxed) {
            return;
        }
        let mut tallies = self.tallies.lock();
        match tallies.get_mut(destination) {
            Some(tally) => add(tally),
            None => add(tallies.entry(destination.clone()).or_default()),
        }
    }

    pub fn delivered(&self, destination: &DestinationId) {
        self.count(destination, |t| t.delivered += 1);
    }

    pub fn retried(&self, destination: &DestinationId, status: Option<u16>, error: Option<&str>) {
        self.count(destination, |t| {
            t.retried += 1;
            t.rate_limited += u64::from(status == Some(429));
            t.last_status = status;
            t.last_error = error.map(str::to_owned);
        });
    }

    pub fn failed(&self, destination: &DestinationId) {
        self.count(destination, |t| t.failed += 1);
    }

    pub fn fenced(&self, destination: &DestinationId) {
        self.count(destination, |t| t.fenced += 1);
    }

    pub fn handed_back(&self, destination: &DestinationId) {
        self.count(destination, |t| t.handed_back += 1);
    }

    /// Every destination's tally since the last take, in id order, and a
    /// fresh start.
    pub fn take(&self) -> Vec<(DestinationId, Tally)> {
        std::mem::take(&mut *self.tallies.lock())
            .into_iter()
            .collect()
    }

    /// One INFO line per destination with work since the last, with the
    /// seconds since then.
    pub fn log(&self, log: &slog::Logger) {
        let seconds = std::mem::replace(&mut *self.since.lock(), Instant::now())
            .elapsed()
            .as_secs();
        for (destination, t) in self.take() {
            info!(log, "deliveries";
                  "destination" => %destination, "seconds" => seconds,
                  "delivered" => t.delivered, "retried" => t.retried,
                  "rate_limited" => t.rate_limited, "failed" => t.failed,
                  "fenced" => t.fenced, "handed_back" => t.handed_back,
                  "last_retry_status" => t.last_status,
                  "last_retry_error" => t.last_error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_destination_counts_apart_and_a_take_starts_afresh() {
        let summary = DeliverySummary::default();
        let crm = DestinationId::new("crm").unwrap_or_else(|e| panic!("{e}"));
        let lab = DestinationId::new("lab").unwrap_or_else(|e| panic!("{e}"));
        summary.delivered(&crm);
        summary.delivered(&crm);
        summary.retried(&crm, Some(429), None);
        summary.retried(&lab, None, Some("connection refused"));
        summary.failed(&lab);
        summary.fenced(&lab);
        summary.handed_back(&lab);
        let taken = summary.take();
        assert_eq!(
            taken,
            vec![
                (
                    crm,
                    Tally {
                        delivered: 2,
                        retried: 1,
                        rate_limited: 1,
                        last_status: Some(429),
                        ..Tally::default()
                    }
                ),
                (
                    lab,
                    Tally {
                        retried: 1,
                        failed: 1,
                        fenced: 1,
                        handed_back: 1,
                        last_error: Some("connection refused".into()),
                        ..Tally::default()
                    }
                ),
            ]
        );
        assert!(summary.take().is_empty());
    }
}
