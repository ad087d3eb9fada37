//! `remit export` and `remit import`: a schedule as JSON lines, moved
//! between stores. Payloads travel sealed, so neither needs the key.

use std::path::Path;

use remit::error_chain;
use remit_actors::config::Config;
use remit_actors::words::counted;

use super::connect::connect_without_payloads;

use super::flags::open_input;

use super::error::CliError;

pub async fn export(config: &Config, file: &Path) -> Result<(), CliError> {
    // Nothing is opened; with the payload key configured, secrets still in
    // clear (from before they were sealed) are sealed first.
    let store = match remit_actors::app::payload_key(config) {
        Ok(key) => super::connect::connect_to_seal(config, key).await?,
        Err(_) => connect_without_payloads(config).await?,
    };
    let flag = format!("--file {}", file.display());
    let mut out: Box<dyn std::io::Write> = if file.as_os_str() == "-" {
        Box::new(std::io::BufWriter::new(std::io::stdout().lock()))
    } else {
        let created = owner_only(file).map_err(|e| CliError::Usage(format!("{flag}: {e}")))?;
        Box::new(std::io::BufWriter::new(created))
    };
    let counts = remit_actors::transfer::export(&store, &mut out)
        .await
        .map_err(|e| CliError::Usage(format!("{flag}: {}", error_chain(&e))))?;
    eprintln!(
        "exported {} and {} from {}",
        counted(counts.destinations as u64, "destination"),
        counted(counts.tasks as u64, "task"),
        config.database_description()
    );
    Ok(())
}

pub async fn import(config: &Config, file: &Path) -> Result<(), CliError> {
    let store = connect_without_payloads(config).await?;
    let flag = format!("--file {}", file.display());
    let mut input = open_input(file, &flag)?;
    let report = remit_actors::transfer::import(&store, &mut input)
        .await
        .map_err(|e| match e {
            remit_actors::transfer::TransferError::Store(e) => CliError::from(e),
            e => CliError::Usage(format!("{flag}: {}", error_chain(&e))),
        })?;
    println!(
        "imported into {}: {} added ({} already there), {} added ({} already there)",
        config.database_description(),
        counted(report.destinations.added as u64, "destination"),
        report.destinations.already,
        counted(report.tasks.added as u64, "task"),
        report.tasks.already
    );
    Ok(())
}

/// The export file, created or emptied, readable and writable by its owner
/// only (it holds destinations' sealed secrets and payloads): an existing
/// file is narrowed to 0600 before anything is written to it.
fn owner_only(file: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};

    let created = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(file)?;
    created.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(created)
}
