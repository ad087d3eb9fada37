//! `remit destination set`, `show` and `delete`: a destination's URL and
//! settings changed, read back, or the destination deleted, through the
//! same checks as `PATCH` and `DELETE /v1/destinations/{id}`.

use remit::domain::{DestinationId, SETTING_NAMES};
use remit::store::{Destinations, JobAction, JobFilter, NewJob};
use remit_actors::api::{read_object, ChangeDestination, DeletedView, DestinationView};
use remit_actors::app::AppError;
use remit_actors::config::Config;
use serde_json::{json, Map, Value};

use super::connect::connect_without_payloads;
use super::destination_args::SetArgs;
use super::error::CliError;

/// What `--reset` may name besides the settings: the disable thresholds.
const THRESHOLDS: &[&str] = &["disable_after_seconds", "disable_after_failures"];

pub async fn set(config: &Config, args: SetArgs) -> Result<(), CliError> {
    let id = DestinationId::new(&args.id).map_err(|e| CliError::Usage(e.to_string()))?;
    let body = body(&args)?;
    let change = read_object::<ChangeDestination>(&body.to_string())
        .map_err(|e| CliError::Usage(e.to_string()))?
        .validate()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    if let Some(ms) = args.timeout_ms {
        if u64::from(ms) * 2 > config.lease.seconds * 1000 {
            return Err(CliError::Usage(format!(
                "timeout_ms: must be at most half the lease ({} ms)",
                config.lease.seconds * 500
            )));
        }
    }
    if let Some(url) = &change.url {
        config
            .egress()
            .map_err(AppError::from)?
            .admit(url)
            .await
            .map_err(|e| CliError::Usage(e.to_string()))?;
    }
    // Secret headers are sealed with the payload key.
    let key = remit_actors::app::payload_key(config)?;
    let store = super::connect::connect_to_seal(config, key).await?;
    let changed = store.update_destination(&id, change).await?;
    print_json(&serde_json::to_value(DestinationView::from(&changed)).unwrap_or_default());
    Ok(())
}

/// The request body the flags make, as the API would receive it.
fn body(args: &SetArgs) -> Result<Value, CliError> {
    let mut body = Map::new();
    if let Some(url) = &args.url {
        body.insert("url".into(), json!(url));
    }
    let thresholds = [
        (
            "disable_after_seconds",
            args.disable_after_seconds.map(|v| json!(v)),
        ),
        (
            "disable_after_failures",
            args.disable_after_failures.map(|v| json!(v)),
        ),
    ];
    let thresholds = thresholds
        .into_iter()
        .filter_map(|(name, value)| Some((name, value?)));
    for (name, value) in args.settings_given().into_iter().chain(thresholds) {
        body.insert(name.into(), value);
    }
    let settings: Vec<&str> = SETTING_NAMES.iter().chain(THRESHOLDS).copied().collect();
    for name in &args.reset {
        if !settings.contains(&name.as_str()) {
            return Err(CliError::Usage(format!(
                "--reset: {name} is not a setting; the settings are {}",
                settings.join(", ")
            )));
        }
        if body.contains_key(name) {
            return Err(CliError::Usage(format!("--reset {name}: it is also set")));
        }
        body.insert(name.clone(), Value::Null);
    }
    if args.no_headers || !args.header.is_empty() || !args.secret_header.is_empty() {
        let mut headers = Vec::new();
        for (text, secret) in args
            .header
            .iter()
            .map(|h| (h, false))
            .chain(args.secret_header.iter().map(|h| (h, true)))
        {
            headers.push(header(text, secret)?);
        }
        body.insert("headers".into(), Value::Array(headers));
    }
    if body.is_empty() {
        return Err(CliError::Usage(
            "nothing to change: give a setting, --reset, or headers".into(),
        ));
    }
    Ok(Value::Object(body))
}

/// `Name: value` (or, for a secret, `Name` alone to keep its value).
fn header(text: &str, secret: bool) -> Result<Value, CliError> {
    match text.split_once(':') {
        Some((name, value)) => Ok(json!({
            "name": name.trim(),
            "value": value.trim_start(),
            "secret": secret,
        })),
        None if secret => Ok(json!({"name": text.trim(), "secret": true})),
        None => Err(CliError::Usage("--header: must be `Name: value`".into())),
    }
}

pub async fn show(config: &Config, id: String) -> Result<(), CliError> {
    let id = DestinationId::new(&id).map_err(|e| CliError::Usage(e.to_string()))?;
    let store = connect_without_payloads(config).await?;
    let destination = store
        .destination(&id)
        .await?
        .ok_or_else(|| CliError::Usage(format!("no destination {id}")))?;
    print_json(&serde_json::to_value(DestinationView::from(&destination)).unwrap_or_default());
    Ok(())
}

pub async fn delete(config: &Config, id: String, cancel_tasks: bool) -> Result<(), CliError> {
    let id = DestinationId::new(&id).map_err(|e| CliError::Usage(e.to_string()))?;
    let store = connect_without_payloads(config).await?;
    let region = store
        .destination(&id)
        .await?
        .ok_or_else(|| CliError::Usage(format!("no destination {id}")))?
        .region;
    let cancel = cancel_tasks.then(|| NewJob {
        region,
        action: JobAction::Cancel,
        filter: JobFilter {
            destination: Some(id.clone()),
            ..JobFilter::default()
        },
        requested_by: "cli".into(),
        horizon: config.retry_policy().horizon,
    });
    let deleted = store
        .delete_destination(&id, cancel)
        .await
        .map_err(|e| e.with_remedy("run it again with --cancel-tasks to cancel them with it"))?;
    let view = DeletedView {
        destination: DestinationView::from(&deleted.destination),
        live_tasks: deleted.live_tasks,
        cancel_job: deleted
            .cancel_job
            .as_ref()
            .map(remit_actors::api::JobView::from),
    };
    print_json(&serde_json::to_value(view).unwrap_or_default());
    Ok(())
}

fn print_json(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}
