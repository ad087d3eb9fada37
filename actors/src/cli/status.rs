//! `remit status`: the schedule's health from the database alone.

use remit::store::{Keys, Reports};
use remit_actors::config::Config;

use super::connect::connect_without_payloads;
use super::error::CliError;
use super::flags::region_flag;
use super::report_format::ReportFormat;

pub async fn run(
    config: &Config,
    region: Option<String>,
    format: ReportFormat,
) -> Result<(), CliError> {
    let region = region_flag(region)?;
    // Status reads no payload.
    let store = connect_without_payloads(config).await?;
    // The counts from the replica when there is one, the replication from
    // the primary (only it knows its standbys).
    let reports = remit_actors::app::reports(config, &store).await?;
    let report = reports.status(region).await?;
    let source = match config.database.read_url {
        Some(_) => reports.read_source().await?,
        None => None,
    };
    // What is sealed under each payload key, so an operator knows when an
    // old key can be dropped (after `remit rekey`).
    let sealed = store.sealed_counts().await?;
    // Whether what remit acknowledges survives a failover.
    let replication = store.replication().await?;
    let newest = remit_actors::app::payload_key(config)
        .ok()
        .map(|k| k.fingerprint_hex());
    match format {
        ReportFormat::Text => print!(
            "{}\n{}{}\nSealed under each payload key:\n{}",
            remit_actors::status::to_text(&report, &config.database_description()),
            remit_actors::status::replication_to_text(replication.as_ref()),
            remit_actors::status::read_source_to_text(source.as_ref()),
            remit_actors::rekey::counts_to_text(&sealed, newest.as_deref())
        ),
        ReportFormat::Json => {
            let mut json = remit_actors::status::to_json(&report);
            json["sealed_by_key"] = remit_actors::rekey::counts_to_json(&sealed);
            json["replication"] = remit_actors::status::replication_to_json(replication.as_ref());
            json["read_from"] = remit_actors::status::read_source_to_json(source.as_ref());
            println!("{json}");
        }
    }
    Ok(())
}
