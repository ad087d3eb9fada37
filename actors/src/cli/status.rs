//! `remit status`: the schedule's health from the database alone.

use remit_actors::config::Config;

use super::args::ReportFormat;
use super::{connect_without_payloads, region_flag, CliError};

pub async fn run(
    config: &Config,
    region: Option<String>,
    format: ReportFormat,
) -> Result<(), CliError> {
    let region = region_flag(region)?;
    // Status reads no payload.
    let store = connect_without_payloads(config).await?;
    let report = store.status(region).await?;
    match format {
        ReportFormat::Text => print!(
            "{}",
            remit_actors::status::to_text(&report, &config.database_description())
        ),
        ReportFormat::Json => println!("{}", remit_actors::status::to_json(&report)),
    }
    Ok(())
}
