//! The knobs of a run, read from `LOAD_*` variables over the workload's
//! defaults, so a smoke run is one line of environment
//! (`LOAD_TASKS=2000 cargo bench --bench load -- burst`).

use std::str::FromStr;
use std::time::Duration;

use crate::error::LoadError;
use crate::workloads::{Lines, Workload};

/// remit's own settings for the processes of a run (passed as `REMIT_*`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RemitSettings {
    pub pool_size: u32,
    pub api_pool_size: u32,
    pub max_in_flight: u32,
    pub destination_in_flight: u32,
    pub claim_batch: u32,
    pub claim_cap: u32,
    pub rate_per_destination: f64,
    pub burst: u32,
    pub log_level: String,
}

#[derive(Debug, Clone)]
pub struct Settings {
    pub workload: Workload,
    pub tasks: usize,
    pub destinations: usize,
    /// Tasks the table holds before arrivals start (paced workloads).
    pub backdrop: usize,
    /// Tenants the tasks are spread over (one: every task is tenant `load`).
    pub tenants: usize,
    /// Arrivals that carry an ordering key.
    pub lines: Option<Lines>,
    /// Arrivals per second and for how long (paced workloads).
    pub rate: f64,
    pub seconds: f64,
    /// How often the soak samples throughput and dead tuples.
    pub sample_seconds: f64,
    /// How far ahead of its due time a paced task is scheduled.
    pub lead_ms: i64,
    /// Process counts: one run per entry (only scale-out has several).
    pub processes: Vec<usize>,
    pub payload_bytes: usize,
    pub enqueue_connections: usize,
    pub enqueue_batch: usize,
    pub remit: RemitSettings,
    pub receiver_rate: Option<f64>,
    pub receiver_workers: usize,
    pub ceiling: bool,
    pub ceiling_consumers: u32,
    /// The longest a drain may take before the run reports what is missing.
    pub timeout: Duration,
    pub keep_database: bool,
}

/// Wide open: the most remit's configuration accepts.
const OPEN_RATE: f64 = 1_000_000.0;
const OPEN_BURST: u32 = 1_000_000;
/// The API's limit on one batch call.
const MAX_BATCH: usize = 1_000;

impl Settings {
    pub fn from_env(workload: Workload) -> Result<Self, LoadError> {
        let d = workload.defaults();
        let (rate_per_destination, burst) = d.destination_rate.unwrap_or((OPEN_RATE, OPEN_BURST));
        let pool_size = knob("LOAD_POOL_SIZE", 8)?;
        let enqueue_connections = knob("LOAD_ENQUEUE_CONNECTIONS", 4)?;
        let paced_tasks = |rate: f64, seconds: f64| (rate * seconds).round() as usize;
        let rate = knob("LOAD_RATE", d.rate)?;
        let seconds = knob("LOAD_SECONDS", d.seconds)?;
        let settings = Settings {
            workload,
            tasks: if workload.is_paced() {
                paced_tasks(rate, seconds)
            } else {
                knob("LOAD_TASKS", d.tasks)?
            },
            destinations: knob("LOAD_DESTINATIONS", d.destinations)?,
            backdrop: knob("LOAD_BACKDROP", d.backdrop)?,
            tenants: knob("LOAD_TENANTS", d.tenants)?,
            lines: d.lines,
            rate,
            seconds,
            sample_seconds: knob("LOAD_SAMPLE_SECONDS", 10.0)?,
            lead_ms: knob("LOAD_LEAD_MS", 0)?,
            processes: match std::env::var("LOAD_PROCESSES") {
                Ok(list) => parse_list(&list)?,
                Err(_) => d.processes,
            },
            payload_bytes: knob("LOAD_PAYLOAD_BYTES", 300)?,
            enqueue_connections,
            enqueue_batch: knob("LOAD_ENQUEUE_BATCH", MAX_BATCH)?,
            remit: RemitSettings {
                pool_size,
                // The API takes the enqueue: give it a connection per
                // client connection, not remit's default of two.
                api_pool_size: knob("LOAD_API_POOL_SIZE", enqueue_connections as u32)?,
                max_in_flight: knob("LOAD_MAX_IN_FLIGHT", 256)?,
                destination_in_flight: knob("LOAD_DESTINATION_IN_FLIGHT", d.destination_in_flight)?,
                claim_batch: knob("LOAD_CLAIM_BATCH", 64)?,
                claim_cap: knob("LOAD_CLAIM_CAP", 16)?,
                rate_per_destination: knob("LOAD_DESTINATION_RATE", rate_per_destination)?,
                burst: knob("LOAD_DESTINATION_BURST", burst)?,
                log_level: knob("LOAD_LOG_LEVEL", "warning".to_owned())?,
            },
            receiver_rate: match std::env::var("LOAD_RECEIVER_RATE") {
                Ok(v) if v == "off" => None,
                Ok(v) => Some(parse("LOAD_RECEIVER_RATE", &v)?),
                Err(_) => d.receiver_rate,
            },
            receiver_workers: knob("LOAD_RECEIVER_WORKERS", 2)?,
            ceiling: knob("LOAD_CEILING", 1u8)? != 0,
            ceiling_consumers: knob("LOAD_CEILING_CONSUMERS", pool_size)?,
            timeout: Duration::from_secs(knob("LOAD_TIMEOUT_SECONDS", 900)?),
            keep_database: knob("LOAD_KEEP_DATABASE", 0u8)? != 0,
        };
        settings.check()?;
        Ok(settings)
    }

    fn check(&self) -> Result<(), LoadError> {
        let bad = |what: &str| Err(LoadError::Setup(format!("knob {what}")));
        if self.tasks == 0 || self.destinations == 0 || self.tenants == 0 {
            return bad("LOAD_TASKS, LOAD_DESTINATIONS and LOAD_TENANTS must be at least 1");
        }
        if self.backdrop > 0 && !self.workload.is_paced() {
            return bad("LOAD_BACKDROP applies to paced workloads (steady, soak, renewals)");
        }
        if !(1..=MAX_BATCH).contains(&self.enqueue_batch) {
            return bad("LOAD_ENQUEUE_BATCH must be between 1 and 1000 (the API's limit)");
        }
        if self.enqueue_connections == 0 || self.ceiling_consumers == 0 {
            return bad("LOAD_ENQUEUE_CONNECTIONS and LOAD_CEILING_CONSUMERS must be at least 1");
        }
        if self.processes.is_empty() || self.processes.contains(&0) {
            return bad("LOAD_PROCESSES must list process counts of at least 1");
        }
        if !(self.rate > 0.0 && self.seconds > 0.0 && self.sample_seconds > 0.0) {
            return bad("LOAD_RATE, LOAD_SECONDS and LOAD_SAMPLE_SECONDS must be positive");
        }
        if self.receiver_rate.is_some_and(|r| r <= 0.0) {
            return bad("LOAD_RECEIVER_RATE must be positive (or off)");
        }
        Ok(())
    }
}

fn knob<T: FromStr>(name: &str, default: T) -> Result<T, LoadError> {
    match std::env::var(name) {
        Ok(value) => parse(name, &value),
        Err(_) => Ok(default),
    }
}

fn parse<T: FromStr>(name: &str, value: &str) -> Result<T, LoadError> {
    value
        .trim()
        .parse()
        .map_err(|_| LoadError::Setup(format!("knob {name}: cannot read {value:?}")))
}

fn parse_list(list: &str) -> Result<Vec<usize>, LoadError> {
    list.split(',')
        .map(|n| parse("LOAD_PROCESSES", n))
        .collect()
}
