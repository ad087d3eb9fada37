//! `remit cancel`, `reschedule`, `erase` and `retry-now`: an operator's
//! changes to tasks already scheduled, straight on the database, with the
//! same rules as the API's. Each prints what happened in one line.
//! `remit cancel --filter` cancels in bulk, as a job (`replay::run_job`).

use remit::domain::{DestinationId, Region, ReminderId, Task, TaskId, TenantId};
use remit::store::console::TaskFilter;
use remit::store::{
    why_not_moved, Cancel, Changes, Database, Erase, JobAction, Move, Reports, StoreError,
};
use remit_actors::api::RescheduleTask;
use remit_actors::app::AppError;
use remit_actors::config::Config;
use remit_actors::words::counted;

use super::args::{CancelArgs, EraseArgs, TaskArgs};
use super::connect::connect_without_payloads;
use super::error::CliError;
use super::flags::region_flag;
use super::schedule::read_payload_file;

/// Who a change made here is recorded as.
const BY: &str = "cli";

/// How many tasks one transaction of a tenant's erasure takes.
const ERASE_BATCH: u32 = 500;

fn rejected(what: &'static str, id: String) -> CliError {
    CliError::Rejected(StoreError::NotFound { what, id })
}

/// The task `--task`, or `--tenant` with `--reminder`, names.
async fn find(
    store: &Database,
    config: &Config,
    task: Option<&str>,
    tenant: Option<&str>,
    reminder: Option<&str>,
    region: Option<String>,
) -> Result<TaskId, CliError> {
    if let Some(task) = task {
        return uuid::Uuid::parse_str(task)
            .map(TaskId)
            .map_err(|_| CliError::Usage(format!("--task {task:?}: not a task id (a UUID)")));
    }
    let (Some(tenant), Some(reminder)) = (tenant, reminder) else {
        return Err(CliError::Usage(
            "name the task with --task, or with --tenant and --reminder".into(),
        ));
    };
    let region: Region = match region_flag(region)? {
        Some(region) => region,
        None => config.region().map_err(AppError::from)?,
    };
    let filter = TaskFilter {
        tenant: Some(TenantId::new(tenant).map_err(|e| CliError::Usage(e.to_string()))?),
        reminder: Some(ReminderId::new(reminder).map_err(|e| CliError::Usage(e.to_string()))?),
        ..TaskFilter::default()
    };
    let page = store.search_tasks(region, &filter, None, 1).await?;
    page.tasks.first().map(|t| t.id).ok_or_else(|| {
        CliError::NoMatch(format!(
            "no task of tenant {} with reminder {} in region {region}",
            remit::domain::quoted(tenant),
            remit::domain::quoted(reminder)
        ))
    })
}

/// An instant as the command line writes every one.
fn instant(at: chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn ended(task: &Task, what: &str) -> CliError {
    CliError::Usage(format!(
        "task {} is {}; {what}",
        task.id,
        task.state.as_str()
    ))
}

pub async fn cancel(config: &Config, args: CancelArgs) -> Result<(), CliError> {
    if !args.filters.is_empty() || args.job.is_some() {
        return super::replay::run_job(
            config,
            JobAction::Cancel,
            args.filters,
            args.job,
            args.region,
        )
        .await;
    }
    let store = connect_without_payloads(config).await?;
    let id = find(
        &store,
        config,
        args.task.as_deref(),
        args.tenant.as_deref(),
        args.reminder.as_deref(),
        args.region,
    )
    .await?;
    match store.cancel(id, BY).await? {
        Cancel::Cancelled(task) => println!("cancelled task {}", task.id),
        Cancel::AlreadyCancelled(task) => println!("task {} was cancelled already", task.id),
        Cancel::AfterAttempt(task) => println!(
            "task {} is in flight: it ends cancelled after its attempt, unless that attempt delivers it",
            task.id
        ),
        Cancel::Ended(task) => {
            return Err(ended(&task, "only a task that has not ended can be cancelled"))
        }
        Cancel::NotFound => return Err(rejected("task", id.to_string())),
    }
    Ok(())
}

pub async fn reschedule(
    config: &Config,
    args: TaskArgs,
    not_before: String,
    payload_file: Option<std::path::PathBuf>,
    payload: Option<String>,
) -> Result<(), CliError> {
    let payload = match (payload_file, payload) {
        (Some(path), _) => Some(read_payload_file(&path)?),
        (None, json) => json,
    };
    let change = RescheduleTask::from_parts(not_before, payload)
        // The command line reaches the database itself: it may replay, so
        // it may bring an ended task back too.
        .and_then(|r| r.validate(BY.to_owned(), true))
        .map_err(|e| CliError::Usage(format!("--{}: {}", e.field.replace('_', "-"), e.reason)))?;
    // A new payload is sealed with the configured key.
    let store = match change.payload {
        Some(_) => {
            super::connect::connect_to_seal(config, remit_actors::app::payload_key(config)?).await?
        }
        None => connect_without_payloads(config).await?,
    };
    let id = find(
        &store,
        config,
        args.task.as_deref(),
        args.tenant.as_deref(),
        args.reminder.as_deref(),
        args.region,
    )
    .await?;
    match store.reschedule(id, &change).await? {
        Move::Moved(task) => println!("task {} is due at {}", task.id, instant(task.not_before)),
        Move::AfterAttempt(task) => println!(
            "task {} is in flight: it moves to {} after its attempt, unless that attempt delivers it",
            task.id,
            instant(change.not_before)
        ),
        Move::Refused(task) => {
            return Err(CliError::Usage(format!(
                "task {} is not moved: {}",
                task.id,
                why_not_moved(&task, change.payload.is_some())
            )))
        }
        Move::DestinationDeleted(task) => {
            return Err(CliError::Usage(format!(
                "task {} is not moved: its destination {} was deleted",
                task.id, task.destination_id
            )))
        }
        Move::Ended(task) => {
            return Err(CliError::Usage(format!(
                "task {} is {} and not moved",
                task.id,
                task.state.as_str()
            )))
        }
        Move::NotFound => return Err(rejected("task", id.to_string())),
    }
    Ok(())
}

pub async fn erase(config: &Config, args: EraseArgs) -> Result<(), CliError> {
    let store = connect_without_payloads(config).await?;
    if let (Some(tenant), None, None) = (&args.tenant, &args.reminder, &args.task) {
        let tenant = TenantId::new(tenant).map_err(|e| CliError::Usage(e.to_string()))?;
        let (mut erased, mut cancelled) = (0, 0);
        loop {
            let round = store.erase_tenant(&tenant, BY, ERASE_BATCH).await?;
            erased += round.erased;
            cancelled += round.cancelled;
            if round.erased < u64::from(ERASE_BATCH) {
                break;
            }
        }
        println!(
            "erased {} of tenant {} ({} not ended, now cancelled or cancelled after their attempt)",
            counted(erased, "payload"),
            tenant,
            cancelled
        );
        return Ok(());
    }
    let id = find(
        &store,
        config,
        args.task.as_deref(),
        args.tenant.as_deref(),
        args.reminder.as_deref(),
        args.region,
    )
    .await?;
    match store.erase(id, BY).await? {
        Erase::Erased(task) => println!(
            "erased the payload of task {} (now {}{})",
            task.id,
            task.state.as_str(),
            if task.waiting_change.is_some() {
                ", cancelled after its attempt in flight"
            } else {
                ""
            }
        ),
        Erase::NotFound => return Err(rejected("task", id.to_string())),
    }
    Ok(())
}

pub async fn retry_now(
    config: &Config,
    destination: String,
    tenant: Option<String>,
) -> Result<(), CliError> {
    let destination =
        DestinationId::new(&destination).map_err(|e| CliError::Usage(e.to_string()))?;
    let tenant = tenant
        .map(|t| TenantId::new(&t))
        .transpose()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let store = connect_without_payloads(config).await?;
    let moved = store.retry_now(&destination, tenant.as_ref()).await?;
    println!(
        "{} waiting for a retry now due (destination {destination})",
        counted(moved, "task")
    );
    Ok(())
}
