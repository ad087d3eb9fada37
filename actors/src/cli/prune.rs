//! `remit prune`: deletes old delivered and failed tasks, with their
//! attempts and payloads, the audit log's old entries, and old hours of
//! destinations' health (`retention.stats_keep_days`), and says how many.

use remit::store::{AuditScope, Upkeep};
use remit_actors::config::Config;

use super::connect::connect_without_payloads;

use super::flags::region_flag;

use super::error::CliError;

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
    let stats_keep = config.retention.stats_keep();
    let hours = store
        .prune_destination_stats(request.region, stats_keep)
        .await?;
    print!("{}", remit_actors::prune::to_text(&request, &report));
    // A region's entries with it (and those of no region, shared by all),
    // or, without one, every entry.
    let scopes = match request.region {
        Some(region) => vec![AuditScope::Region(region), AuditScope::Shared],
        None => vec![AuditScope::All],
    };
    let mut entries = 0;
    for scope in scopes {
        entries += store
            .prune_audit(
                scope,
                config.retention.audit_keep(),
                config.retention.batch_size,
            )
            .await?;
    }
    print!(
        "{}",
        remit_actors::prune::audit_text(config.retention.audit_keep_days, entries)
    );
    print!("{}", remit_actors::prune::hours_to_text(stats_keep, hours));
    Ok(())
}
