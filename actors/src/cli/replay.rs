//! `remit replay`: a bulk replay by filter, recorded as a job and worked
//! to the end here, a batch at a time; `--job` resumes or reports one.
//! `remit cancel --filter` (in `task_changes`) does the same with a bulk
//! cancel, through the same functions.

use remit::domain::{InvalidInput, Region};
use remit::store::{Database, Job, JobAction, JobFilter, Jobs, NewJob};
use remit_actors::api::{CancelRequest, ReplayRequest};
use remit_actors::app::AppError;
use remit_actors::config::Config;
use remit_actors::runtime::jobs::BATCH;
use remit_actors::words::counted;

use super::connect::connect_without_payloads;

use super::flags::region_flag;

use super::error::CliError;

/// The keys `--filter` takes, with the request field each fills; a
/// cancel takes all but `reason`.
const KEYS: &[(&str, &str)] = &[
    ("tenant", "tenant_id"),
    ("reminder", "reminder_id"),
    ("destination", "destination_id"),
    ("reason", "reason"),
    ("from", "from"),
    ("until", "until"),
];

fn keys(action: JobAction) -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    KEYS.iter()
        .filter(move |(key, _)| action == JobAction::Replay || *key != "reason")
}

fn accepted(action: JobAction) -> String {
    keys(action).map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
}

/// The `--filter KEY=VALUE` flags as (request field, value) pairs, each
/// key at most once; an error names the key.
fn pairs(filters: &[String], action: JobAction) -> Result<Vec<(&'static str, String)>, CliError> {
    let mut found: Vec<(&'static str, String)> = Vec::new();
    for filter in filters {
        let Some((key, value)) = filter.split_once('=') else {
            return Err(CliError::Usage(format!(
                "--filter {filter:?}: write KEY=VALUE, KEY one of {}",
                accepted(action)
            )));
        };
        if action == JobAction::Cancel && key == "reason" {
            return Err(CliError::Usage(
                "--filter reason: a cancel takes no failure reason (only a failed task has one); \
                 the keys are tenant, reminder, destination, from, until"
                    .into(),
            ));
        }
        let Some(&(_, field)) = keys(action).find(|(k, _)| *k == key) else {
            return Err(CliError::Usage(format!(
                "--filter: unknown key {key:?}; the keys are {}",
                accepted(action)
            )));
        };
        if found.iter().any(|(f, _)| *f == field) {
            return Err(CliError::Usage(format!("--filter: {key} is given twice")));
        }
        found.push((field, value.to_owned()));
    }
    Ok(found)
}

/// The `--filter KEY=VALUE` flags as the API's request, so both check a
/// filter alike; an error names the key.
pub fn request(filters: &[String]) -> Result<ReplayRequest, CliError> {
    let mut request = ReplayRequest::default();
    for (field, value) in pairs(filters, JobAction::Replay)? {
        let slot = match field {
            "tenant_id" => &mut request.tenant_id,
            "reminder_id" => &mut request.reminder_id,
            "destination_id" => &mut request.destination_id,
            "reason" => &mut request.reason,
            "from" => &mut request.from,
            _ => &mut request.until,
        };
        *slot = Some(value);
    }
    Ok(request)
}

/// The `--filter KEY=VALUE` flags as `POST /v1/tasks/cancel`'s request.
pub fn cancel_request(filters: &[String]) -> Result<CancelRequest, CliError> {
    let mut request = CancelRequest::default();
    for (field, value) in pairs(filters, JobAction::Cancel)? {
        let slot = match field {
            "tenant_id" => &mut request.tenant_id,
            "reminder_id" => &mut request.reminder_id,
            "destination_id" => &mut request.destination_id,
            "from" => &mut request.from,
            _ => &mut request.until,
        };
        *slot = Some(value);
    }
    Ok(request)
}

/// A refusal of the request, naming the `--filter` key at fault.
fn refused(e: InvalidInput) -> CliError {
    let key = KEYS
        .iter()
        .find(|(_, field)| *field == e.field)
        .map_or(e.field, |(key, _)| *key);
    CliError::Usage(format!("--filter {key}: {}", e.reason))
}

/// What a job of `action` is called, and what it does, for the messages.
fn words(action: JobAction) -> (&'static str, &'static str, &'static str) {
    match action {
        JobAction::Replay => ("bulk replay", "replayed", "failed task"),
        JobAction::Cancel => ("bulk cancel", "cancelled", "task"),
    }
}

pub async fn run(
    config: &Config,
    filters: Vec<String>,
    job: Option<String>,
    region: Option<String>,
) -> Result<(), CliError> {
    run_job(config, JobAction::Replay, filters, job, region).await
}

/// Records a job of `action` by `filters` (or takes the recorded one
/// `job`) and works it to the end here, then prints its count.
pub(super) async fn run_job(
    config: &Config,
    action: JobAction,
    filters: Vec<String>,
    job: Option<String>,
    region: Option<String>,
) -> Result<(), CliError> {
    let region = match region_flag(region)? {
        Some(region) => region,
        None => config.region().map_err(AppError::from)?,
    };
    let (called, did, noun) = words(action);
    // Replaying and cancelling open no payload.
    let store = connect_without_payloads(config).await?;
    let job = match job {
        Some(id) => resume(&store, region, action, &id).await?,
        None => {
            let filter: JobFilter = match action {
                JobAction::Replay => request(&filters)?.filter(),
                JobAction::Cancel => cancel_request(&filters)?.filter(),
            }
            .map_err(refused)?;
            let job = store
                .create_job(NewJob {
                    region,
                    action,
                    filter,
                    requested_by: "cli".into(),
                    horizon: config.retry_policy().horizon,
                })
                .await?;
            eprintln!("recorded {called} {} (region {region})", job.id);
            job
        }
    };
    let done = work(&store, job, did).await?;
    println!(
        "{called} {}: {did} {}",
        done.id,
        counted(u64::try_from(done.replayed).unwrap_or(0), noun)
    );
    Ok(())
}

/// The job `id` of `region` and `action`; another region's job is
/// answered as missing, as the API and the console answer it, so a host
/// never works tasks of a region it does not serve.
async fn resume(
    store: &Database,
    region: Region,
    action: JobAction,
    id: &str,
) -> Result<Job, CliError> {
    let (called, _, _) = words(action);
    let missing = || CliError::Usage(format!("--job: no {called} with id {id:?}"));
    let parsed = uuid::Uuid::parse_str(id).map_err(|_| missing())?;
    let job = store
        .job(parsed)
        .await?
        .filter(|job| job.region == region)
        .ok_or_else(missing)?;
    if job.action != action {
        let (other, _, _) = words(job.action);
        return Err(CliError::Usage(format!(
            "--job: {id} is a {other}, not a {called}: resume it with remit {} --job {id}",
            job.action
        )));
    }
    Ok(job)
}

/// Advances `job` to its end, a line on standard error per batch.
async fn work(store: &Database, mut job: Job, did: &str) -> Result<Job, CliError> {
    while !job.finished() {
        job = store.advance_job(job.id, BATCH).await?;
        eprintln!("{did} {} so far", job.replayed);
    }
    Ok(job)
}
