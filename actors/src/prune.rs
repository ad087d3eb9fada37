//! `remit prune`: the request, from the command line and the `retention`
//! settings, and the report in plain words.

use remit::domain::{PruneReport, PruneRequest, Region};

use crate::config::Config;
use crate::words::counted;

/// `--older-than` when given, `retention.keep_days` otherwise; batches of
/// `retention.batch_size`. `retention.enabled` concerns only the runtime:
/// run by hand, pruning always runs.
pub fn request(
    config: &Config,
    region: Option<Region>,
    older_than: Option<chrono::Duration>,
) -> PruneRequest {
    PruneRequest {
        region,
        older_than: older_than.unwrap_or_else(|| config.retention.keep()),
        batch_size: config.retention.batch_size,
    }
}

/// Two lines: what was asked, and what went.
pub fn to_text(request: &PruneRequest, report: &PruneReport) -> String {
    let age = age(request.older_than);
    let region = request
        .region
        .map_or("every region".to_owned(), |r| format!("region {r}"));
    format!(
        "pruned delivered and failed tasks that ended more than {age} ago, {region}\n\
         deleted {}, {} and {} in {}\n",
        counted(report.tasks, "task"),
        counted(report.attempts, "attempt"),
        counted(report.payloads, "payload"),
        counted(report.batches, "batch"),
    )
}

/// One line: the audit log's entries deleted, older than `keep_days`
/// (`retention.audit_keep_days`).
pub fn audit_text(keep_days: u64, deleted: u64) -> String {
    format!(
        "deleted {} older than {}\n",
        counted(deleted, "audit entry"),
        counted(keep_days, "day")
    )
}

/// One line: the destination hours deleted, which ended more than
/// `older_than` ago (`retention.stats_keep_days`; `--older-than` concerns
/// tasks only).
pub fn hours_to_text(older_than: chrono::Duration, hours: u64) -> String {
    format!(
        "deleted {} of destination health that ended more than {} ago\n",
        counted(hours, "hour"),
        age(older_than)
    )
}

fn age(d: chrono::Duration) -> String {
    d.to_std()
        .map(|d| humantime::format_duration(d).to_string())
        .unwrap_or_else(|_| d.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_is_plain_words() {
        let config = Config::default();
        let request = request(&config, Some(Region::EU), None);
        let report = PruneReport {
            tasks: 1,
            attempts: 3,
            payloads: 1,
            batches: 1,
        };
        assert_eq!(
            to_text(&request, &report),
            "pruned delivered and failed tasks that ended more than 30days ago, region eu\n\
             deleted 1 task, 3 attempts and 1 payload in 1 batch\n"
        );
        assert_eq!(
            audit_text(365, 2),
            "deleted 2 audit entries older than 365 days\n"
        );
        assert_eq!(
            hours_to_text(config.retention.stats_keep(), 1),
            "deleted 1 hour of destination health that ended more than 7days ago\n"
        );
        let request = super::request(&config, None, Some(chrono::Duration::hours(36)));
        assert_eq!(request.batch_size, 500);
        let text = to_text(&request, &PruneReport::default());
        assert!(
            text.contains("more than 1day 12h ago, every region")
                && text.contains("deleted 0 tasks, 0 attempts and 0 payloads in 0 batches"),
            "{text}"
        );
    }
}
