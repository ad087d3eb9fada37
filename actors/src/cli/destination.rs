//! `remit destination add`: registers a receiver, after the same checks
//! as the API and the send policy's word on its URL; `rotate-secret` and
//! `secrets`: its signing secrets.

use remit::domain::DestinationId;
use remit::store::Store;
use remit_actors::api::{CreateDestination, RotateSecret};
use remit_actors::app::AppError;
use remit_actors::config::Config;

use super::{connect_without_payloads, CliError};

/// The store, with the payload key that seals secrets checked against the
/// database's (a secret sealed under another key could not be opened).
async fn connect_to_seal(config: &Config) -> Result<remit::store::Database, CliError> {
    let key = remit_actors::app::payload_key(config)?;
    Ok(remit_actors::app::connect_to_seal(config, key).await?)
}

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
    println!(
        "destination {id}: secret {} added; the secrets valid before sign until {}",
        stored.id,
        ends.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    if checked.generated {
        // Shown this once: remit never prints a stored secret again.
        println!("{}", checked.rotation.secret);
    }
    Ok(())
}

pub async fn secrets(config: &Config, id: String) -> Result<(), CliError> {
    let id = DestinationId::new(&id).map_err(|e| CliError::Usage(e.to_string()))?;
    let store = connect_without_payloads(config).await?;
    for secret in store.signing_secrets(&id).await? {
        let ends = secret.expires_at.map_or("never".to_owned(), |at| {
            at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        });
        println!(
            "{}  created {}  expires {ends}",
            secret.id,
            secret
                .created_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        );
    }
    Ok(())
}
