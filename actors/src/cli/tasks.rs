//! `remit tasks`: a page of a region's tasks, newest first, with the
//! filters of GET /v1/tasks (checked by the same code); never a payload.

use remit::domain::{Task, TaskState};
use remit::store::Reports;
use remit_actors::api::{TaskFields, TaskQuery};
use remit_actors::app::AppError;
use remit_actors::config::Config;

use super::args::TaskListArgs;
use super::connect::connect_without_payloads;
use super::error::CliError;
use super::flags::region_flag;
use super::report_format::ReportFormat;

pub async fn run(config: &Config, args: TaskListArgs) -> Result<(), CliError> {
    let region = match region_flag(args.region)? {
        Some(region) => region,
        None => config.region().map_err(AppError::from)?,
    };
    let query = TaskQuery {
        tenant_id: args.tenant,
        reminder_id: args.reminder,
        destination_id: args.destination,
        state: args.state,
        from: args.from,
        until: args.until,
        before: args.before,
        limit: Some(args.limit),
    };
    let (filter, before, limit) = query
        .filter(None)
        .map_err(|e| CliError::Usage(format!("--{}: {}", flag(e.field), e.reason)))?;
    let store = connect_without_payloads(config).await?;
    let page = store.search_tasks(region, &filter, before, limit).await?;
    match args.format {
        ReportFormat::Json => {
            for task in &page.tasks {
                let line = serde_json::to_string(&TaskFields::from(task))
                    .map_err(|e| CliError::Usage(e.to_string()))?;
                println!("{line}");
            }
        }
        ReportFormat::Text => {
            for t in &page.tasks {
                println!(
                    "{}  {:<10}  {}  tenant {}  reminder {}  destination {}  attempts {}{}",
                    t.id,
                    t.state.as_str(),
                    instant(t.not_before),
                    t.tenant_id,
                    t.reminder_id,
                    t.destination_id,
                    t.attempt_count,
                    next(t)
                );
            }
            if let Some(next) = page.next {
                println!("more: --before {next}");
            }
        }
    }
    Ok(())
}

fn instant(at: chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// What comes next for a task: the time of its next attempt while it
/// waits, that one is under way while it is leased, nothing once ended.
fn next(task: &Task) -> String {
    match task.state {
        TaskState::Pending | TaskState::RetryWait => {
            format!("  next attempt {}", instant(task.available_at))
        }
        TaskState::Leased => "  attempt under way".to_owned(),
        _ => String::new(),
    }
}

/// The flag that sets a query field.
fn flag(field: &str) -> &str {
    match field {
        "tenant_id" => "tenant",
        "reminder_id" => "reminder",
        "destination_id" => "destination",
        other => other,
    }
}
