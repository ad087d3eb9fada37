//! `remit replay`: a bulk replay by filter, recorded as a job and worked
//! to the end here, a batch at a time; `--job` resumes or reports one.

use remit::domain::Region;
use remit::store::console::{NewReplayJob, ReplayJob};
use remit::store::Database;
use remit::store::ReplayJobs;
use remit_actors::api::ReplayRequest;
use remit_actors::app::AppError;
use remit_actors::config::Config;
use remit_actors::replay_jobs::BATCH;
use remit_actors::words::counted;

use super::{connect_without_payloads, region_flag, CliError};

/// The keys `--filter` takes, with the request field each fills.
const KEYS: &[(&str, &str)] = &[
    ("tenant", "tenant_id"),
    ("reminder", "reminder_id"),
    ("destination", "destination_id"),
    ("reason", "reason"),
    ("from", "from"),
    ("until", "until"),
];

fn accepted() -> String {
    KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
}

/// The `--filter KEY=VALUE` flags as the API's request, so both check a
/// filter alike; an error names the key.
pub fn request(filters: &[String]) -> Result<ReplayRequest, CliError> {
    let mut request = ReplayRequest::default();
    for filter in filters {
        let Some((key, value)) = filter.split_once('=') else {
            return Err(CliError::Usage(format!(
                "--filter {filter:?}: write KEY=VALUE, KEY one of {}",
                accepted()
            )));
        };
        let slot = match key {
            "tenant" => &mut request.tenant_id,
            "reminder" => &mut request.reminder_id,
            "destination" => &mut request.destination_id,
            "reason" => &mut request.reason,
            "from" => &mut request.from,
            "until" => &mut request.until,
            _ => {
                return Err(CliError::Usage(format!(
                    "--filter: unknown key {key:?}; the keys are {}",
                    accepted()
                )))
            }
        };
        if slot.replace(value.to_owned()).is_some() {
            return Err(CliError::Usage(format!("--filter: {key} is given twice")));
        }
    }
    Ok(request)
}

pub async fn run(
    config: &Config,
    filters: Vec<String>,
    job: Option<String>,
    region: Option<String>,
) -> Result<(), CliError> {
    let region = match region_flag(region)? {
        Some(region) => region,
        None => config.region().map_err(AppError::from)?,
    };
    // Replaying opens no payload.
    let store = connect_without_payloads(config).await?;
    let job = match job {
        Some(id) => resume(&store, region, &id).await?,
        None => {
            let filter = request(&filters)?.filter().map_err(|e| {
                let key = KEYS
                    .iter()
                    .find(|(_, field)| *field == e.field)
                    .map_or(e.field, |(key, _)| *key);
                CliError::Usage(format!("--filter {key}: {}", e.reason))
            })?;
            let job = store
                .create_replay_job(NewReplayJob {
                    region,
                    filter,
                    requested_by: "cli".into(),
                    horizon: config.retry_policy().horizon,
                })
                .await?;
            eprintln!("recorded bulk replay {} (region {region})", job.id);
            job
        }
    };
    let done = work(&store, job).await?;
    println!(
        "bulk replay {}: replayed {}",
        done.id,
        counted(u64::try_from(done.replayed).unwrap_or(0), "failed task")
    );
    Ok(())
}

/// The job `id` of `region`; another region's job is answered as missing,
/// as the API and the console answer it, so a host never works tasks of a
/// region it does not serve.
async fn resume(store: &Database, region: Region, id: &str) -> Result<ReplayJob, CliError> {
    let missing = || CliError::Usage(format!("--job: no bulk replay with id {id:?}"));
    let id = uuid::Uuid::parse_str(id).map_err(|_| missing())?;
    store
        .replay_job(id)
        .await?
        .filter(|job| job.region == region)
        .ok_or_else(missing)
}

/// Advances `job` to its end, a line on standard error per batch.
async fn work(store: &Database, mut job: ReplayJob) -> Result<ReplayJob, CliError> {
    while !job.finished() {
        job = store.advance_replay_job(job.id, BATCH).await?;
        eprintln!("replayed {} so far", job.replayed);
    }
    Ok(job)
}
