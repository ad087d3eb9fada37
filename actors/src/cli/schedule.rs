//! `remit schedule`: one webhook from flags, or many from a file of JSON
//! lines shaped like the API's.

use remit::store::Schedule;
use std::path::Path;

use remit::error_chain;
use remit_actors::api::horizons::Horizons;
use remit_actors::api::{CreateTask, TaskRules};
use remit_actors::app::{self, AppError};
use remit_actors::config::Config;
use remit_actors::schedule_file::ScheduleFileError;

use super::args::ScheduleArgs;
use super::error::CliError;
use super::flags::open_input;

/// The CLI schedules for any region (the operator names it); the API
/// serves its own unless configured otherwise.
fn rules(config: &Config) -> Result<TaskRules, CliError> {
    Ok(TaskRules {
        serving: config.region().map_err(AppError::from)?,
        allow_other_regions: true,
        horizon: config.retry_policy().horizon,
    })
}

/// One webhook from flags, or many from `--file`.
pub async fn run(config: &Config, args: ScheduleArgs) -> Result<(), CliError> {
    match &args.file {
        Some(file) => from_file(config, file).await,
        None => one(config, args).await,
    }
}

async fn one(config: &Config, args: ScheduleArgs) -> Result<(), CliError> {
    let ScheduleArgs {
        tenant,
        reminder,
        destination,
        region,
        not_before,
        payload_file,
        payload,
        ordering_key,
        ..
    } = args;
    let (Some(tenant), Some(reminder), Some(destination), Some(region), Some(not_before)) =
        (tenant, reminder, destination, region, not_before)
    else {
        return Err(CliError::Usage(
            "--tenant, --reminder, --destination, --region and --not-before are required without --file".into(),
        ));
    };
    let payload = match (payload_file, payload) {
        (Some(path), _) => read_payload_file(&path)?,
        (None, Some(json)) => json,
        (None, None) => {
            return Err(CliError::Usage(
                "--payload or --payload-file is required".into(),
            ))
        }
    };
    let rules = rules(config)?;
    let new = CreateTask::from_parts(tenant, reminder, destination, region, not_before, &payload)
        .and_then(|request| request.in_line(ordering_key).validate(&rules))
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let key = app::payload_key(config)?;
    let store = super::connect::connect_to_seal(config, key).await?;
    // The flags name no horizon: the destination's own, else the runtime's.
    let mut one = [(new, false)];
    Horizons::default().apply(&store, &mut one).await?;
    let [(new, _)] = one;
    let scheduled = store.schedule(new).await?;
    println!(
        "task {} idempotency_key {}{}",
        scheduled.task.id,
        scheduled.task.idempotency_key,
        if scheduled.created {
            ""
        } else {
            " (already scheduled)"
        }
    );
    Ok(())
}

/// `remit schedule --file`: exit 0 when every line was scheduled (or was
/// already), 1 when any was refused, each refusal printed with its line.
async fn from_file(config: &Config, path: &Path) -> Result<(), CliError> {
    let flag = format!("--file {}", path.display());
    let input = open_input(path, &flag)?;
    let rules = rules(config)?;
    let key = app::payload_key(config)?;
    let store = super::connect::connect_to_seal(config, key).await?;
    let tally =
        remit_actors::schedule_file::schedule_lines(&store, &rules, input, |(line, text)| {
            println!("line {line}: {text}");
        })
        .await
        .map_err(|e| match e {
            ScheduleFileError::Store(e) => {
                eprintln!("{flag}: {}", error_chain(&e));
                CliError::App(AppError::Store(e))
            }
            e => CliError::Usage(format!("{flag}: {}", error_chain(&e))),
        })?;
    println!(
        "{} scheduled, {} already scheduled, {} refused",
        tally.created, tally.repeated, tally.refused
    );
    if tally.refused > 0 {
        return Err(CliError::Refused(tally.refused));
    }
    Ok(())
}

/// The payload from `--payload-file PATH`, or from standard input for `-`.
pub(super) fn read_payload_file(path: &Path) -> Result<String, CliError> {
    use std::io::Read;
    let flag = format!("--payload-file {}", path.display());
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::Usage(format!("{flag}: cannot read standard input ({e})")))?;
    } else {
        bytes = std::fs::read(path).map_err(|e| CliError::Usage(format!("{flag}: {e}")))?;
    }
    String::from_utf8(bytes)
        .map_err(|_| CliError::Usage(format!("{flag}: the payload must be UTF-8 JSON")))
}
