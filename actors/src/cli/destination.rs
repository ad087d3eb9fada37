//! `remit destination add`: registers a receiver, after the same checks
//! as the API and the send policy's word on its URL; `rotate-secret` and
//! `secrets`: its signing secrets. `remit destination disable` / `enable`:
//! takes one out of delivery, or brings it back.

use remit::domain::{Destination, DestinationId};
use remit::store::Destinations;
use remit_actors::api::{CreateDestination, DisableDestination, RotateSecret};
use remit_actors::app::AppError;
use remit_actors::config::Config;
use remit_actors::words::instant;

use super::connect::connect_without_payloads;

use super::error::CliError;

/// The store, with the payload key that seals secrets checked against the
/// database's (a secret sealed under another key could not be opened).
async fn connect_to_seal(config: &Config) -> Result<remit::store::Database, CliError> {
    let key = remit_actors::app::payload_key(config)?;
    Ok(super::connect::connect_to_seal(config, key).await?)
}

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
    // The secret is sealed with the payload key.
    let store = connect_to_seal(config).await?;
    let destination = store.add_destination(new).await?;
    println!(
        "destination {} ({}) -> {}",
        destination.id, destination.region, destination.url
    );
    Ok(())
}

pub async fn rotate_secret(
    config: &Config,
    id: String,
    secret: Option<String>,
    old_expires_at: Option<String>,
) -> Result<(), CliError> {
    let id = DestinationId::new(&id).map_err(|e| CliError::Usage(e.to_string()))?;
    let checked = RotateSecret::from_parts(secret, old_expires_at)
        .validate(chrono::Utc::now())
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let store = connect_to_seal(config).await?;
    let ends = checked.rotation.old_expires_at;
    let stored = store.rotate_secret(&id, checked.rotation.clone()).await?;
    // Standard output holds the generated secret alone, so that a script
    // can take it (`secret=$(remit destination rotate-secret crm)`); what
    // was done goes to standard error, as `token create` does.
    if checked.generated {
        // Shown this once: remit never prints a stored secret again.
        println!("{}", checked.rotation.secret);
    }
    eprintln!(
        "destination {id}: secret {} added{}; the secrets valid before sign until {}",
        stored.id,
        if checked.generated {
            " (shown this once, above)"
        } else {
            ""
        },
        instant(ends)
    );
    Ok(())
}

pub async fn secrets(config: &Config, id: String) -> Result<(), CliError> {
    let id = DestinationId::new(&id).map_err(|e| CliError::Usage(e.to_string()))?;
    let store = connect_without_payloads(config).await?;
    for secret in store.signing_secrets(&id).await? {
        let ends = secret.expires_at.map_or("never".to_owned(), instant);
        println!(
            "{}  created {}  expires {ends}",
            secret.id,
            instant(secret.created_at)
        );
    }
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
            instant(at)
        ),
        _ if !d.enabled => println!("destination {} ({}) disabled", d.id, d.region),
        _ => println!("destination {} ({}) enabled", d.id, d.region),
    }
}
