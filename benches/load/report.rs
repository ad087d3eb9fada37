//! What a run prints: one JSON line on stdout (for scripts and for
//! docs/benchmarks.md), and the same as a readable table on stderr.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::backdrop::Filled;
use crate::ceiling::Ceiling;
use crate::process::Usage;
use crate::settings::RemitSettings;
use crate::statements::StatementShare;

/// One soak sample: the window since the previous one.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    pub t_s: f64,
    pub deliveries_per_s: f64,
    pub enqueued: u64,
    pub delivered: u64,
    pub lag_p50_ms: Option<f64>,
    pub lag_p99_ms: Option<f64>,
    pub dead_tuples: i64,
    /// Resident memory now (VmRSS), all processes together.
    pub rss_mb: f64,
}

/// One run. Field meanings and methods: docs/benchmarks.md, "Load harness".
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub workload: String,
    pub processes: usize,
    pub tasks: usize,
    pub destinations: usize,
    pub tenants: usize,
    /// The rows the table held before the window (renewals), and how long
    /// writing them took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backdrop: Option<Filled>,
    pub deliveries_per_s: f64,
    pub ceiling_per_s: Option<f64>,
    pub ratio: Option<f64>,
    pub lag_p50_ms: Option<f64>,
    pub lag_p99_ms: Option<f64>,
    pub lag_max_ms: Option<f64>,
    /// What lags count from: `due` (the task's not_before) or
    /// `runtime_start` (a drain: the later of not_before and the moment
    /// the delivering processes were started).
    pub lag_from: &'static str,
    pub enqueue_per_s: f64,
    pub enqueue_refused: usize,
    pub enqueue_calls: usize,
    /// Paced workloads: the arrival rate asked for.
    pub target_rate: Option<f64>,
    pub rss_mb: f64,
    pub cpu_s: f64,
    pub dead_tuples: i64,
    /// Transactions (xact_commit + xact_rollback) per delivery.
    pub round_trips_per_delivery: Option<f64>,
    /// Statements per delivery from pg_stat_statements, where it answers:
    /// every statement is a round trip (BEGIN and COMMIT included).
    pub statements_per_delivery: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub top_statements: Vec<StatementShare>,
    /// Where pg_stat_statements answers: the claim's calls over the
    /// window, the tasks they returned, and the buffers (shared blocks hit
    /// or read) they touched per task returned, empty claims included.
    pub claim_calls: Option<i64>,
    pub claim_tasks: Option<i64>,
    pub claim_buffers_per_task: Option<f64>,
    /// The server's `jit` as a session on the run's URL gets it.
    pub jit: Option<String>,
    /// WAL the server wrote over the window (`pg_current_wal_lsn()` before
    /// and after, the whole cluster), per delivery.
    pub wal_bytes_per_delivery: Option<f64>,
    /// The measured window's first and last WAL positions, for
    /// `pg_waldump --stats=record -s FROM -e TO` (docs/benchmarks.md).
    pub wal_window: Option<[String; 2]>,
    /// `n_tup_hot_upd / n_tup_upd` of `tasks` at the end: the share of row
    /// updates that wrote no index entry.
    pub hot_update_share: Option<f64>,
    /// `own_database` when the run had a database to itself; otherwise the
    /// count includes every other client of the database it shared.
    pub round_trips_scope: &'static str,
    pub delivered: u64,
    pub all_delivered: bool,
    pub duplicates: u64,
    pub repeat_requests: u64,
    pub requests: u64,
    pub rejected_429: u64,
    pub early_after_429: u64,
    pub unkeyed: u64,
    /// Throttled: what the limits allow at most, all destinations together.
    pub throttle_limit_per_s: Option<f64>,
    /// Deliveries in each whole 10-second window of the drain, from its
    /// start: whether the rate holds throughout or comes in bursts.
    pub per_10s: Vec<u64>,
    /// Throttled: the lowest whole window's deliveries per second over what
    /// the limits allow (all windows before the backlog ran out).
    pub rate_used: Option<f64>,
    pub drain_s: f64,
    pub task_states: BTreeMap<String, i64>,
    pub per_process: Vec<Usage>,
    pub ceiling: Option<Ceiling>,
    pub settings: RemitSettings,
    pub binary_stale: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Sample>,
}

/// The nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

impl Report {
    pub fn print(&self) {
        match serde_json::to_string(self) {
            Ok(line) => println!("{line}"),
            Err(e) => eprintln!("could not write the report as JSON: {e}"),
        }
        eprintln!("{}", self.table());
    }

    fn table(&self) -> String {
        let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.0}"));
        let per_s = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.0}/s"));
        let mut rows: Vec<(&str, String)> = vec![
            ("deliveries/s", format!("{:.0}", self.deliveries_per_s)),
            ("SQL ceiling", per_s(self.ceiling_per_s)),
            (
                "ratio",
                self.ratio.map_or("-".to_owned(), |r| format!("{r:.2}")),
            ),
            (
                "lag p50/p99/max",
                format!(
                    "{} / {} / {} ms (from {})",
                    ms(self.lag_p50_ms),
                    ms(self.lag_p99_ms),
                    ms(self.lag_max_ms),
                    self.lag_from
                ),
            ),
            (
                "enqueue/s",
                format!(
                    "{:.0}{}",
                    self.enqueue_per_s,
                    self.target_rate
                        .map_or(String::new(), |r| format!(" (asked {r:.0})"))
                ),
            ),
            (
                "delivered",
                format!(
                    "{} of {} ({}), duplicates {}, repeat requests {}",
                    self.delivered,
                    self.tasks,
                    if self.all_delivered { "all" } else { "NOT ALL" },
                    self.duplicates,
                    self.repeat_requests
                ),
            ),
            (
                "peak RSS",
                format!(
                    "{:.1} MiB (per process: {})",
                    self.rss_mb,
                    self.per_process
                        .iter()
                        .map(|u| format!("{:.1}", u.rss_mb))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            ("CPU", format!("{:.1} s in remit", self.cpu_s)),
            ("dead tuples", self.dead_tuples.to_string()),
            (
                "transactions/deliv.",
                format!(
                    "{} ({})",
                    self.round_trips_per_delivery
                        .map_or("-".to_owned(), |r| format!("{r:.2}")),
                    self.round_trips_scope
                ),
            ),
            (
                "WAL/deliv.",
                self.wal_bytes_per_delivery
                    .map_or("-".to_owned(), |w| format!("{w:.0} bytes")),
            ),
            (
                "HOT updates",
                self.hot_update_share
                    .map_or("-".to_owned(), |h| format!("{:.0}%", h * 100.0)),
            ),
            (
                "statements/deliv.",
                self.statements_per_delivery
                    .map_or("- (no pg_stat_statements)".to_owned(), |r| {
                        format!("{r:.2}")
                    }),
            ),
            (
                "claim buffers/task",
                match (self.claim_calls, self.claim_tasks) {
                    (Some(calls), Some(tasks)) => format!(
                        "{} ({calls} claims returned {tasks} tasks)",
                        self.claim_buffers_per_task
                            .map_or("-".to_owned(), |b| format!("{b:.1}"))
                    ),
                    _ => "- (no pg_stat_statements)".to_owned(),
                },
            ),
            ("jit", self.jit.clone().unwrap_or_else(|| "-".to_owned())),
            ("drain", format!("{:.1} s", self.drain_s)),
        ];
        if let Some(b) = &self.backdrop {
            rows.push((
                "backdrop",
                format!(
                    "{} tasks of {} tenants ({} delivered, {} pending, {} lines of {}), \
                     written in {:.1} s + vacuum {:.1} s",
                    b.tasks,
                    b.tenants,
                    b.delivered,
                    b.pending,
                    b.lines,
                    b.line_length,
                    b.insert_s,
                    b.vacuum_s
                ),
            ));
        }
        if self.rejected_429 > 0 || self.throttle_limit_per_s.is_some() {
            rows.push((
                "429s",
                format!(
                    "{} (arrived during a Retry-After: {}), limits allow {}",
                    self.rejected_429,
                    self.early_after_429,
                    per_s(self.throttle_limit_per_s)
                ),
            ));
        }
        if !self.per_10s.is_empty() {
            rows.push((
                "per 10 s",
                format!(
                    "{:?}{}",
                    self.per_10s,
                    self.rate_used.map_or(String::new(), |r| format!(
                        ", lowest window {r:.2} of the limit"
                    ))
                ),
            ));
        }
        if self.unkeyed > 0 {
            rows.push(("no Idempotency-Key", self.unkeyed.to_string()));
        }
        let mut text = format!(
            "── {} · {} process(es) · {} tasks over {} destinations, {} tenant(s){}\n",
            self.workload,
            self.processes,
            self.tasks,
            self.destinations,
            self.tenants,
            if self.binary_stale {
                " · STALE BINARY"
            } else {
                ""
            }
        );
        for (name, value) in rows {
            text.push_str(&format!("  {name:<20} {value}\n"));
        }
        for s in self.top_statements.iter().take(8) {
            text.push_str(&format!(
                "    {:>6.2}/deliv. {:>7.1} µs/deliv.  {}\n",
                s.per_delivery, s.exec_us_per_delivery, s.query
            ));
        }
        if !self.samples.is_empty() {
            text.push_str(
                "  samples:    t_s  deliv/s  backlog  lag_p50  lag_p99  dead_tup  rss_mb\n",
            );
            for s in &self.samples {
                text.push_str(&format!(
                    "          {:>6.0} {:>8.0} {:>8} {:>8} {:>8} {:>9} {:>7.1}\n",
                    s.t_s,
                    s.deliveries_per_s,
                    s.enqueued.saturating_sub(s.delivered),
                    ms(s.lag_p50_ms),
                    ms(s.lag_p99_ms),
                    s.dead_tuples,
                    s.rss_mb
                ));
            }
        }
        text
    }
}
