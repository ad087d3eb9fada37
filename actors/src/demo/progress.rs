//! The demo's live progress: a bar per state, from the database, drawn on
//! standard error (and not at all when it is not a terminal).

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use remit::store::RegionStatus;

pub struct Bars {
    all: MultiProgress,
    delivered: ProgressBar,
    retry_wait: ProgressBar,
    leased: ProgressBar,
    pending: ProgressBar,
}

impl Bars {
    pub fn new(total: u64) -> Self {
        let all = MultiProgress::new();
        let style = ProgressStyle::with_template("{prefix:>10} [{bar:40}] {pos:>5}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        let bar = |name: &str| {
            let bar = all.add(ProgressBar::new(total));
            bar.set_style(style.clone());
            bar.set_prefix(name.to_owned());
            bar
        };
        Self {
            delivered: bar("delivered"),
            retry_wait: bar("retry_wait"),
            leased: bar("leased"),
            pending: bar("pending"),
            all,
        }
    }

    pub fn show(&self, region: &RegionStatus, rate_limited: u64) {
        self.delivered.set_position(region.delivered.max(0) as u64);
        self.retry_wait
            .set_position(region.retry_wait.max(0) as u64);
        self.retry_wait
            .set_message(format!("{rate_limited} 429s so far"));
        self.leased.set_position(region.leased.max(0) as u64);
        self.pending.set_position(region.pending.max(0) as u64);
    }

    /// A line above the bars (or on its own without a terminal).
    pub fn println(&self, line: &str) {
        if self.all.println(line).is_err() || self.delivered.is_hidden() {
            println!("{line}");
        }
    }

    /// Leaves the bars as they last stood (`ProgressBar::finish` would
    /// fill them).
    pub fn finish(&self) {
        for bar in [
            &self.delivered,
            &self.retry_wait,
            &self.leased,
            &self.pending,
        ] {
            bar.abandon();
        }
    }
}
