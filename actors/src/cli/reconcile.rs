//! `remit reconcile`, for cron: exit 0 when the schedule is clean, 1 when
//! it found something (the report says what), 3 when it could not look.

use remit::store::Upkeep;
use std::path::PathBuf;

use remit::error_chain;
use remit_actors::app::AppError;
use remit_actors::config::Config;

use super::connect::connect_without_payloads;
use super::error::CliError;
use super::flags::region_flag;
use super::report_format::ReportFormat;

pub async fn run(
    config: &Config,
    region: Option<String>,
    ledger: Option<PathBuf>,
    older_than: std::time::Duration,
    reclaim: bool,
    format: ReportFormat,
) -> Result<(), CliError> {
    let region = region_flag(region)?;
    let ledger = ledger
        .map(|path| remit_actors::reconcile::read_ledger(&path))
        .transpose()
        .map_err(|e| CliError::Usage(error_chain(&e)))?;
    let request = remit::domain::ReconcileRequest {
        region,
        older_than: chrono::Duration::from_std(older_than)
            .map_err(|_| CliError::Usage("--older-than: too long".into()))?,
        reclaim,
        ledger,
        list_limit: 1000,
    };
    // Reports name tasks, never payloads.
    let store = connect_without_payloads(config)
        .await
        .map_err(CliError::CouldNotCheck)?;
    let report = store
        .reconcile(&request)
        .await
        .map_err(|e| CliError::CouldNotCheck(AppError::Store(e)))?;
    match format {
        ReportFormat::Text => print!("{}", remit_actors::reconcile::to_text(&report)),
        ReportFormat::Json => println!("{}", remit_actors::reconcile::to_json(&report)),
    }
    if report.is_clean() {
        Ok(())
    } else {
        Err(CliError::Findings)
    }
}
