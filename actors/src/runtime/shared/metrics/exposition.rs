//! The two text formats a scraper may ask /metrics for. `prometheus-client`
//! writes OpenMetrics, where a counter family is named without `_total`
//! and its samples with it. The Prometheus text format (0.0.4), which a
//! scraper gets unless it asks for OpenMetrics and which `promtool check
//! metrics` reads, names the family as its samples: `# HELP` and `# TYPE`
//! of a counter end in `_total` there, and there is no `# EOF`.

/// The media type of the Prometheus text format.
pub const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The media type of OpenMetrics text.
pub const OPENMETRICS_TEXT: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Whether an `Accept` header asks for OpenMetrics (Prometheus's own
/// scrapes do, preferring it); anything else gets the Prometheus text
/// format.
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|accept| {
        accept.split(',').any(|range| {
            let media = range.split(';').next().unwrap_or("").trim();
            media.eq_ignore_ascii_case("application/openmetrics-text")
        })
    })
}

/// OpenMetrics text as `prometheus-client` writes it, in the Prometheus
/// text format: counters' `# HELP` and `# TYPE` renamed to the samples'
/// `_total` names, `# UNIT` and `# EOF` left out. Samples are unchanged
/// (histograms' `_bucket`, `_sum` and `_count` read alike in both).
pub fn to_prometheus_text(openmetrics: &str) -> String {
    let counters: std::collections::HashSet<&str> = openmetrics
        .lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|rest| rest.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len() + counters.len() * 12);
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(name)
                .then(|| format!("{prefix}{name}_total {tail}"))
        });
        match renamed {
            Some(renamed) => out.push_str(&renamed),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_as_their_samples_and_nothing_else_changes() {
        let openmetrics = "# HELP remit_claimed Tasks claimed.\n\
            # TYPE remit_claimed counter\n\
            remit_claimed_total{region=\"eu\"} 3\n\
            # HELP remit_tasks Depth.\n\
            # TYPE remit_tasks gauge\n\
            remit_tasks{region=\"eu\",state=\"pending\"} 1\n\
            # HELP remit_lag_seconds Lag.\n\
            # TYPE remit_lag_seconds histogram\n\
            # UNIT remit_lag_seconds seconds\n\
            remit_lag_seconds_bucket{le=\"+Inf\"} 0\n\
            # EOF\n";
        assert_eq!(
            to_prometheus_text(openmetrics),
            "# HELP remit_claimed_total Tasks claimed.\n\
             # TYPE remit_claimed_total counter\n\
             remit_claimed_total{region=\"eu\"} 3\n\
             # HELP remit_tasks Depth.\n\
             # TYPE remit_tasks gauge\n\
             remit_tasks{region=\"eu\",state=\"pending\"} 1\n\
             # HELP remit_lag_seconds Lag.\n\
             # TYPE remit_lag_seconds histogram\n\
             remit_lag_seconds_bucket{le=\"+Inf\"} 0\n"
        );
    }

    #[test]
    fn only_an_accept_naming_openmetrics_gets_it() {
        assert!(wants_openmetrics(Some(
            "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
        )));
        assert!(!wants_openmetrics(None));
        assert!(!wants_openmetrics(Some("*/*")));
        assert!(!wants_openmetrics(Some("text/plain")));
    }
}
