//! Works a region's bulk replays and bulk cancels (replay jobs, of either
//! action) to the end, batch by batch, in whichever process serves the
//! region (`remit run`, `remit console`).
//!
//! Jobs are durable: one made by the API, the console or the CLI is picked
//! up at the next tick by any process of its region, and one left half
//! done by a stopped process is carried on from its recorded cursor. Each
//! batch moves the cursor under the job's lock, so several processes of a
//! region may work one job at once without counting a task twice.

use std::time::Duration;

use remit::domain::Region;
use remit::store::{Database, Job, JobAction, Jobs};
use slog::{info, warn};

/// Tasks replayed or cancelled per transaction: small enough that a batch
/// holds its locks briefly, large enough that a big job is not one commit
/// per task.
pub const BATCH: u32 = 200;

/// How often the runner looks for jobs when none is left.
const TICK: Duration = Duration::from_secs(1);

/// Progress is logged once every this many batches of a job, and at its
/// end.
const LOG_EVERY: u32 = 25;

/// Starts working the region's unfinished replay jobs; stops when the
/// handle is aborted or the actix system stops.
pub fn spawn(store: Database, region: Region, log: slog::Logger) -> actix_rt::task::JoinHandle<()> {
    let log = log.new(slog::o!("component" => "replay_jobs"));
    actix_rt::spawn(async move {
        loop {
            work(&store, region, &log).await;
            actix_rt::time::sleep(TICK).await;
        }
    })
}

/// Every unfinished job of the region, oldest first, each to its end; a
/// job that fails is left for the next tick, and the round goes on to the
/// next job, so one job that cannot advance does not hold up the others.
async fn work(store: &Database, region: Region, log: &slog::Logger) {
    let jobs = match store.jobs(region, true, 100).await {
        Ok(jobs) => jobs,
        Err(e) => {
            warn!(log, "could not list the bulk jobs; retrying at the next tick";
                  "error" => remit::error_chain(&e));
            return;
        }
    };
    for job in jobs.into_iter().rev() {
        if let Err(e) = finish(store, &job, log).await {
            warn!(log, "a bulk job failed; retrying at the next tick";
                  "job" => %job.id, "action" => job.action.as_str(),
                  "error" => remit::error_chain(&e));
        }
    }
}

async fn finish(
    store: &Database,
    job: &Job,
    log: &slog::Logger,
) -> Result<(), remit::store::StoreError> {
    let mut batches: u32 = 0;
    let (finished, in_progress, counted) = match job.action {
        JobAction::Replay => (
            "bulk replay finished",
            "bulk replay in progress",
            "replayed",
        ),
        JobAction::Cancel => (
            "bulk cancel finished",
            "bulk cancel in progress",
            "cancelled",
        ),
    };
    loop {
        let now = store.advance_job(job.id, BATCH).await?;
        batches = batches.wrapping_add(1);
        if now.finished() {
            info!(log, "{}", finished; "job" => %now.id, counted => now.replayed);
            return Ok(());
        }
        if batches % LOG_EVERY == 0 {
            info!(log, "{}", in_progress; "job" => %now.id, counted => now.replayed);
        }
    }
}
