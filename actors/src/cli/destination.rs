//! `remit destination add`: registers a receiver, after the same checks
//! as the API and the send policy's word on its URL.

use remit::store::Store;
use remit_actors::api::CreateDestination;
use remit_actors::app::AppError;
use remit_actors::config::Config;

use super::{connect_without_payloads, CliError};

pub async fn add(
    config: &Config,
    id: String,
    region: String,
    url: String,
    secret: Option<String>,
) -> Result<(), CliError> {
    let new = CreateDestination::from_parts(id, region, url, secret)
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
