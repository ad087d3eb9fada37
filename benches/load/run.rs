//! One run from start to report: an empty database migrated by the binary,
//! the receiver, the environment every process gets; then, once a
//! workload has driven it, the common measurements (PostgreSQL's counts,
//! the receiver's tally, the ceiling) turned into a [`Report`].

use std::path::PathBuf;
use std::time::Duration;

use remit::payload_crypto::PayloadKey;

use crate::backdrop::Filled;
use crate::ceiling::{self, Ceiling, CeilingSetup};
use crate::clock::now_ms;
use crate::database::{Isolation, RunDatabase};
use crate::enqueue::{Enqueued, TaskShape};
use crate::error::LoadError;
use crate::process::{self, Binary, RemitProcess, Usage};
use crate::receiver::{Limit, Receiver};
use crate::report::{percentile, Report, Sample};
use crate::server;
use crate::settings::Settings;
use crate::statements::Snapshot;

/// How long a process may take to answer /healthz, and to drain on
/// SIGTERM (remit's own shutdown deadline is 10 s).
const READY_WITHIN: Duration = Duration::from_secs(30);
const STOP_WITHIN: Duration = Duration::from_secs(30);
/// Statements listed by their share of the round trips.
const TOP_STATEMENTS: usize = 8;

pub struct Run<'a> {
    pub settings: &'a Settings,
    binary: &'a Binary,
    pub db: RunDatabase,
    pub receiver: Receiver,
    env: Vec<(String, String)>,
    logs: Logs,
    /// For health checks.
    client: awc::Client,
    pub shape: TaskShape,
    /// The server's `jit`, as the run's URL gets it (PostgreSQL only).
    jit: Option<String>,
}

/// What a workload hands over once its tasks are delivered (or it gave up).
#[derive(Debug)]
pub struct Driven {
    pub processes: usize,
    pub enqueue: Enqueued,
    /// Where deliveries_per_s counts from: the drain's start, or the first
    /// task's due time.
    pub window_start_ms: f64,
    pub transactions_before: i64,
    /// The server's WAL position when the window started.
    pub wal_before: i64,
    pub statements_before: Option<Snapshot>,
    pub usage: Vec<Usage>,
    pub lag_from: &'static str,
    pub target_rate: Option<f64>,
    pub samples: Vec<Sample>,
    /// The rows the table held before the window, if any.
    pub backdrop: Option<Filled>,
}

/// The processes' logs: removed after a run that delivered everything,
/// kept and named otherwise (a run that failed midway included).
#[derive(Debug)]
struct Logs {
    dir: PathBuf,
    remove: bool,
}

impl Drop for Logs {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            eprintln!("the processes' logs are in {}", self.dir.display());
        }
    }
}

impl<'a> Run<'a> {
    pub async fn prepare(
        settings: &'a Settings,
        binary: &'a Binary,
        base_url: &str,
    ) -> Result<Run<'a>, LoadError> {
        let db = RunDatabase::create(base_url, settings.keep_database).await?;
        let jit = if db.is_sqlite() {
            None
        } else {
            Some(server::jit(db.url()).await?)
        };
        let env = process::environment(&settings.remit, db.url(), &PayloadKey::generate_base64());
        binary.run_once(&env, &["migrate"])?;
        let limit = match settings.receiver_rate {
            Some(rate) => Limit::PerDestination {
                rate,
                burst: rate.max(1.0),
            },
            None => Limit::Open,
        };
        let receiver = Receiver::start(limit, settings.receiver_workers)?;
        let log_dir = std::env::temp_dir().join(format!(
            "remit-load-{}-{}",
            settings.workload,
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&log_dir)
            .map_err(LoadError::io(format!("creating {log_dir:?}")))?;
        Ok(Run {
            settings,
            binary,
            db,
            receiver,
            env,
            logs: Logs {
                dir: log_dir,
                remove: false,
            },
            client: awc::Client::default(),
            shape: TaskShape::new(
                settings.destinations,
                settings.tenants,
                settings.lines,
                settings.payload_bytes,
            ),
            jit,
        })
    }

    pub fn destination_urls(&self) -> Vec<String> {
        (0..self.settings.destinations)
            .map(|n| self.receiver.url(n))
            .collect()
    }

    /// Starts `remit run --region <region>` processes and waits until each
    /// answers /healthz.
    pub async fn spawn(
        &self,
        region: &str,
        labels: &[String],
        extra: &[(&str, &str)],
    ) -> Result<Vec<RemitProcess>, LoadError> {
        let mut started = Vec::new();
        for label in labels {
            started.push(RemitProcess::spawn(
                self.binary,
                &self.env,
                extra,
                region,
                label,
                &self.logs.dir,
            )?);
        }
        for process in &mut started {
            process.wait_ready(&self.client, READY_WITHIN).await?;
        }
        Ok(started)
    }

    pub async fn stop(processes: &mut [RemitProcess]) -> Vec<Usage> {
        let mut usage = Vec::new();
        for process in processes {
            usage.push(process.stop(STOP_WITHIN).await);
        }
        usage
    }

    /// Waits until the receiver has seen `total` deliveries, the timeout
    /// passes or a process dies, showing progress.
    pub async fn wait_delivered(&self, total: u64, label: &str, processes: &mut [RemitProcess]) {
        let deadline = std::time::Instant::now() + self.settings.timeout;
        let mut progress = crate::progress::Progress::new(label, total);
        while self.receiver.delivered() < total {
            if let Some(why) = processes.iter_mut().find_map(RemitProcess::exited) {
                progress.println(&format!("{label}: {why}"));
                return;
            }
            if std::time::Instant::now() > deadline {
                progress.println(&format!(
                    "{label}: gave up after {:?} with {} of {total} delivered",
                    self.settings.timeout,
                    self.receiver.delivered()
                ));
                return;
            }
            progress.set(self.receiver.delivered(), "");
            actix_rt::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The run's measurements, the ceiling (measured here unless given),
    /// and the database dropped.
    pub async fn conclude(
        self,
        driven: Driven,
        ceiling: Option<Ceiling>,
    ) -> Result<(Report, Option<Ceiling>), LoadError> {
        let settings = self.settings;
        // Every process has exited, so its backends have reported.
        self.db.settle().await;
        let transactions = self.db.transactions().await? - driven.transactions_before;
        let wal_after = self.db.wal_position().await?;
        let wal = wal_after - driven.wal_before;
        let hot_update_share = self.db.hot_update_share().await?;
        let statements_after = self.db.statements().await?;
        let dead_tuples = self.db.dead_tuples().await?;
        let task_states = self.db.states().await?;
        let tally = self.receiver.tally();
        let (statements, top_statements, claim) =
            match (&driven.statements_before, &statements_after) {
                (Some(before), Some(after)) => {
                    let (total, top) = after.since(before, tally.delivered, TOP_STATEMENTS);
                    (Some(total), top, Some(after.claim_since(before)))
                }
                _ => (None, Vec::new(), None),
            };

        let ceiling = match ceiling {
            Some(known) => Some(known),
            // The SQL-only ceiling measures PostgreSQL's statements.
            None if settings.ceiling && !self.db.is_sqlite() => Some(self.measure_ceiling().await?),
            None => None,
        };
        let window_end = tally.last_delivery_ms.unwrap_or_else(now_ms);
        let drain_s = ((window_end - driven.window_start_ms) / 1000.0).max(1e-3);
        let deliveries_per_s = tally.delivered as f64 / drain_s;
        let per_10s = per_window(&tally.delivered_at_ms, driven.window_start_ms, window_end);
        let rate_used = self.throttle_limit().and_then(|limit| {
            let lowest = per_10s.iter().min()?;
            Some(*lowest as f64 / 10.0 / limit)
        });
        // The backdrop's delivered rows were there before the window.
        let db_delivered = task_states.get("delivered").copied().unwrap_or(0)
            - driven.backdrop.as_ref().map_or(0, |b| b.delivered);
        let tasks = driven.enqueue.tasks;
        let report = Report {
            workload: settings.workload.to_string(),
            processes: driven.processes,
            tasks,
            destinations: settings.destinations,
            deliveries_per_s,
            ceiling_per_s: ceiling.as_ref().map(|c| c.per_s),
            ratio: ceiling.as_ref().map(|c| deliveries_per_s / c.per_s),
            lag_p50_ms: percentile(&tally.lags_ms, 50.0),
            lag_p99_ms: percentile(&tally.lags_ms, 99.0),
            lag_max_ms: tally.lags_ms.last().copied(),
            lag_from: driven.lag_from,
            enqueue_per_s: driven.enqueue.per_second(),
            enqueue_refused: driven.enqueue.refused,
            enqueue_calls: driven.enqueue.calls,
            target_rate: driven.target_rate,
            rss_mb: driven.usage.iter().map(|u| u.rss_mb).fold(0.0, f64::max),
            cpu_s: driven.usage.iter().map(|u| u.cpu_s).sum(),
            dead_tuples,
            round_trips_per_delivery: (tally.delivered > 0)
                .then(|| transactions as f64 / tally.delivered as f64),
            statements_per_delivery: statements
                .filter(|_| tally.delivered > 0)
                .map(|n| n as f64 / tally.delivered as f64),
            top_statements,
            claim_calls: claim.map(|c| c.calls),
            claim_tasks: claim.map(|c| c.tasks),
            claim_buffers_per_task: claim.and_then(|c| c.buffers_per_task),
            jit: self.jit.clone(),
            tenants: settings.tenants,
            backdrop: driven.backdrop,
            wal_bytes_per_delivery: (tally.delivered > 0 && !self.db.is_sqlite())
                .then(|| wal as f64 / tally.delivered as f64),
            wal_window: (!self.db.is_sqlite()).then(|| [lsn(driven.wal_before), lsn(wal_after)]),
            hot_update_share,
            round_trips_scope: match self.db.isolation() {
                Isolation::Database => "own_database",
                Isolation::Schema => "shared_database",
            },
            delivered: tally.delivered,
            all_delivered: tally.delivered == tasks as u64 && db_delivered == tasks as i64,
            duplicates: tally.duplicates,
            repeat_requests: tally.repeat_requests,
            requests: tally.requests,
            rejected_429: tally.rejected,
            early_after_429: tally.early_after_429,
            unkeyed: tally.unkeyed,
            throttle_limit_per_s: self.throttle_limit(),
            per_10s,
            rate_used,
            drain_s,
            task_states,
            per_process: driven.usage,
            ceiling: ceiling.clone(),
            settings: settings.remit.clone(),
            binary_stale: self.binary.stale.is_some(),
            samples: driven.samples,
        };
        self.db.remove().await?;
        let mut logs = self.logs;
        logs.remove = report.all_delivered;
        Ok((report, ceiling))
    }

    /// What the limits allow, all destinations together, when any limit is
    /// below wide open.
    fn throttle_limit(&self) -> Option<f64> {
        let remit = self.settings.remit.rate_per_destination;
        let limit = match self.settings.receiver_rate {
            Some(receiver) => remit.min(receiver),
            None if remit < 1_000_000.0 => remit,
            None => return None,
        };
        Some(limit * self.settings.destinations as f64)
    }

    async fn measure_ceiling(&self) -> Result<Ceiling, LoadError> {
        let s = self.settings;
        let (_, url) = self.db.new_schema("ceiling").await?;
        remit::store::migrate(&url).await?;
        // The ceiling blocks this thread while it runs: nothing else of the
        // run is left to do meanwhile.
        eprintln!(
            "ceiling: {} tasks, {} consumers claiming {} (at most {} per destination)…",
            s.tasks, s.ceiling_consumers, s.remit.claim_batch, s.remit.claim_cap
        );
        let ceiling = ceiling::measure(
            url,
            CeilingSetup {
                tasks: s.tasks,
                destinations: s.destinations,
                payload_bytes: s.payload_bytes,
                consumers: s.ceiling_consumers,
                batch: s.remit.claim_batch,
                per_destination_cap: s.remit.claim_cap,
            },
        )?;
        eprintln!("ceiling: {:.0} deliveries/s", ceiling.per_s);
        Ok(ceiling)
    }
}

/// Deliveries in each whole 10-second window from `start` that ends by
/// `end` (the last delivery).
fn per_window(at_ms: &[f64], start: f64, end: f64) -> Vec<u64> {
    const WINDOW_MS: f64 = 10_000.0;
    let whole = ((end - start) / WINDOW_MS).floor().max(0.0) as usize;
    let mut counts = vec![0; whole];
    for t in at_ms {
        let i = ((t - start) / WINDOW_MS).floor();
        if i >= 0.0 && (i as usize) < whole {
            counts[i as usize] += 1;
        }
    }
    counts
}

/// A WAL position as PostgreSQL writes one (`16/B374D848`).
fn lsn(position: i64) -> String {
    format!("{:X}/{:X}", position >> 32, position & 0xFFFF_FFFF)
}
