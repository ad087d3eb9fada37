//! The load harness: the real `remit run` binary of one region, fed
//! through its batch API, delivering to a local receiver, on an empty
//! database (renewals: on a million reminders written first); and, in the
//! same run, the SQL-only ceiling of the same claim and finish statements
//! for comparison.
//!
//!     cargo build --release -p remit-actors --bin remit
//!     cargo bench --bench load -- <workload> [<workload> ...]
//!
//! Workloads: burst, steady, throttled, many-destinations, soak, scale-out,
//! renewals.
//! Sizes and settings are `LOAD_*` variables (see `load/settings.rs`);
//! PostgreSQL is DATABASE_URL, else a throwaway cluster; `DATABASE_URL=sqlite://`
//! runs on a SQLite file of its own instead. One JSON line per
//! run on stdout, a table and progress on stderr. docs/benchmarks.md ("Load
//! harness") says what each field means and how it is measured.
//!
//! # Layout
//! - `workloads`: what each workload is, with its default sizes.
//! - `settings`: the `LOAD_*` knobs over those defaults.
//! - `cluster`: a throwaway PostgreSQL when DATABASE_URL is not set.
//! - `database`: the run's own empty database and PostgreSQL's counts.
//! - `server`: the server's settings a report names (`jit`).
//! - `statements`: round trips per statement and the claim's buffers per
//!   task, where pg_stat_statements is.
//! - `backdrop`: the month of history and year of future reminders a
//!   renewals run starts on, written in SQL.
//! - `receiver`: the local receiver that counts, deduplicates and times.
//! - `process`: the `remit` binary as child processes, their memory and CPU.
//! - `enqueue`: `POST /v1/tasks/batch`, all at once or at a fixed rate.
//! - `run`: one run from an empty database to its report.
//! - `drain`, `paced`: the two shapes of workload that drive a run.
//! - `ceiling`: the SQL-only ceiling on `PgStore`.
//! - `report`, `progress`, `clock`, `error`: output, time and failures.

use std::process::ExitCode;

#[path = "load/backdrop.rs"]
mod backdrop;
#[path = "load/ceiling.rs"]
mod ceiling;
#[path = "load/clock.rs"]
mod clock;
#[path = "load/cluster.rs"]
mod cluster;
#[path = "load/database.rs"]
mod database;
#[path = "load/drain.rs"]
mod drain;
#[path = "load/enqueue.rs"]
mod enqueue;
#[path = "load/error.rs"]
mod error;
#[path = "load/paced.rs"]
mod paced;
#[path = "load/process.rs"]
mod process;
#[path = "load/progress.rs"]
mod progress;
#[path = "load/receiver.rs"]
mod receiver;
#[path = "load/report.rs"]
mod report;
#[path = "load/run.rs"]
mod run;
#[path = "load/server.rs"]
mod server;
#[path = "load/settings.rs"]
mod settings;
#[path = "load/statements.rs"]
mod statements;
#[path = "load/workloads.rs"]
mod workloads;

use ceiling::Ceiling;
use error::LoadError;
use process::Binary;
use settings::Settings;
use workloads::Workload;

fn main() -> ExitCode {
    // `cargo bench` passes flags of its own (`--bench`); workloads are the
    // other arguments.
    let names: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let workloads: Option<Vec<Workload>> = names.iter().map(|n| Workload::parse(n)).collect();
    let workloads = match workloads {
        Some(list) if !list.is_empty() => list,
        _ => {
            let all: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
            eprintln!(
                "usage: cargo bench --bench load -- <workload> [<workload> ...]\nworkloads: {}",
                all.join(", ")
            );
            return ExitCode::from(2);
        }
    };
    match start(&workloads) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("load: {}", remit::error_chain(&e));
            ExitCode::FAILURE
        }
    }
}

fn start(workloads: &[Workload]) -> Result<(), LoadError> {
    // awc is built with rustls, which needs a process-wide provider even
    // for plain http.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let binary = Binary::locate()?;
    if let Some(why) = &binary.stale {
        eprintln!("WARNING: {why}; the numbers are the old binary's");
    }
    let _cluster;
    let base = match std::env::var("DATABASE_URL") {
        Ok(url) => url,
        Err(_) => {
            let cluster = cluster::Cluster::start()?;
            let url = cluster.url().to_owned();
            _cluster = cluster;
            url
        }
    };
    actix_rt::System::new().block_on(async {
        for &workload in workloads {
            run_workload(workload, &binary, &base).await?;
        }
        Ok(())
    })
}

/// One workload: one run, or one per process count for scale-out, all
/// compared with one ceiling.
async fn run_workload(workload: Workload, binary: &Binary, base: &str) -> Result<(), LoadError> {
    let settings = Settings::from_env(workload)?;
    let counts = if workload == Workload::ScaleOut {
        settings.processes.clone()
    } else {
        vec![settings.processes[0]]
    };
    let mut ceiling: Option<Ceiling> = None;
    for processes in counts {
        eprintln!("{workload}: {processes} process(es), fresh database…");
        let run = run::Run::prepare(&settings, binary, base).await?;
        let (report, measured) = if workload.is_paced() {
            paced::paced(run, ceiling.take()).await?
        } else {
            drain::drain(run, processes, ceiling.take()).await?
        };
        report.print();
        ceiling = measured;
    }
    Ok(())
}
