//! `remit destination add`: registers a receiver, after the same checks
//! as the API and the send policy's word on its URL. `remit destination
//! disable` / `enable`: takes one out of delivery, or brings it back.

use remit::domain::{Destination, DestinationId};
use remit::store::Store;
use remit_actors::api::{CreateDestination, DisableDestination};
use remit_actors::app::AppError;
use remit_actors::config::Config;

use super::{connect_without_payloads, CliError};

pub async fn add(config: &Config, request: CreateDestination) -> Result<(), CliError> {
    let new = request
        .validate()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    config
        .egress()
        .map_err(AppError::from)?
        .admit(&new.url)
        .await
        .map_err(|e| CliError::Usage(e.to_string()))?;
    // Destinations hold no payloads.
    let store = connect_without_payloads(config).await?;
    let destination = store.add_destination(new).await?;
    println!(
        "destination {} ({}) -> {}",
        destination.id, destination.region, destination.url
    );
    Ok(())
}

pub async fn disable(config: &Config, id: String, reason: Option<String>) -> Result<(), CliError> {
    let id = DestinationId::new(&id).map_err(|e| CliError::Usage(e.to_string()))?;
    let reason = DisableDestination::new(reason)
        .validate()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let store = connect_without_payloads(config).await?;
    let d = store.disable_destination(&id, reason).await?;
    print_state(&d);
    Ok(())
}

pub async fn enable(config: &Config, id: String) -> Result<(), CliError> {
    let id = DestinationId::new(&id).map_err(|e| CliError::Usage(e.to_string()))?;
    let store = connect_without_payloads(config).await?;
    let d = store.enable_destination(&id).await?;
    print_state(&d);
    Ok(())
}

fn print_state(d: &Destination) {
    match (&d.health.disabled_reason, d.health.disabled_at) {
        (Some(reason), Some(at)) if !d.enabled => println!(
            "destination {} ({}) disabled since {}: {reason}",
            d.id,
            d.region,
            at.to_rfc3339()
        ),
        _ if !d.enabled => println!("destination {} ({}) disabled", d.id, d.region),
        _ => println!("destination {} ({}) enabled", d.id, d.region),
    }
}
