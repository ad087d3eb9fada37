//! `remit prune`: deletes old delivered and failed tasks, with their
//! attempts and payloads, and the audit log's old entries, and says how
//! many.

use remit::store::{Audit, Store};
use remit_actors::config::Config;

use super::{connect_without_payloads, region_flag, CliError};

pub async fn run(
    config: &Config,
    region: Option<String>,
    older_than: Option<std::time::Duration>,
) -> Result<(), CliError> {
    let region = region_flag(region)?;
    let older_than = older_than
        .map(chrono::Duration::from_std)
        .transpose()
        .map_err(|_| CliError::Usage("--older-than: too long".into()))?;
    let request = remit_actors::prune::request(config, region, older_than);
    // Pruning never opens a payload.
    let store = connect_without_payloads(config).await?;
    let report = store.prune(&request).await?;
    print!("{}", remit_actors::prune::to_text(&request, &report));
    let entries = store
        .prune_audit(config.retention.audit_keep(), config.retention.batch_size)
        .await?;
    print!(
        "{}",
        remit_actors::prune::audit_text(config.retention.audit_keep_days, entries)
    );
    Ok(())
}
