//! `remit status`: the schedule's health on one screen, from the database
//! alone (no runtime needs to run), as an aligned table for people or JSON
//! for scripts.

use crate::words::counted;
use chrono::Duration;
use remit::store::{ReadSource, Replication, StatusReport};
use serde_json::{json, Value};

/// A duration as a person reads it: `850ms`, `12.4s`, `3m05s`, `2h10m`.
pub fn human(d: Duration) -> String {
    let ms = d.num_milliseconds().max(0);
    match ms {
        0..=999 => format!("{ms}ms"),
        1_000..=59_999 => format!("{:.1}s", ms as f64 / 1000.0),
        60_000..=3_599_999 => format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60),
        _ => format!("{}h{:02}m", ms / 3_600_000, (ms / 60_000) % 60),
    }
}

fn seconds(d: Duration) -> f64 {
    d.num_milliseconds() as f64 / 1000.0
}

pub fn to_json(report: &StatusReport) -> Value {
    json!({
        "now": report.now,
        "regions": report.regions.iter().map(|r| json!({
            "region": r.region.map(|r| r.to_string()),
            "pending": r.pending,
            "leased": r.leased,
            "retry_wait": r.retry_wait,
            "delivered": r.delivered,
            "failed": r.failed,
            "cancelled": r.cancelled,
            "oldest_eligible_seconds": r.oldest_eligible.map(seconds),
            "expired_leases": r.expired_leases,
        })).collect::<Vec<_>>(),
        "paused": report.paused.iter().map(|(id, region, until)| json!({
            "destination": id.as_str(), "region": region.to_string(), "until": until,
        })).collect::<Vec<_>>(),
        "refused": report.refused.iter().map(|r| json!({
            "destination": r.destination.as_str(), "region": r.region.to_string(),
            "why": r.why, "last": r.last,
        })).collect::<Vec<_>>(),
        "disabled": report.disabled.iter().map(|d| json!({
            "destination": d.id.as_str(), "region": d.region.to_string(),
            "reason": d.health.disabled_reason, "since": d.health.disabled_at,
            "last_error": d.health.last_error, "last_error_at": d.health.last_error_at,
            "failure_streak": d.health.failure_streak,
        })).collect::<Vec<_>>(),
        "top_retry_wait": report.top_retry_wait.iter().map(|(id, n)| json!({
            "destination": id.as_str(), "tasks": n,
        })).collect::<Vec<_>>(),
        "top_rate_limited_last_hour": report.top_rate_limited.iter().map(|(id, n)| json!({
            "destination": id.as_str(), "responses_429": n,
        })).collect::<Vec<_>>(),
        "failures_last_day": report.failures_last_day.iter().map(|(reason, n)| json!({
            "reason": reason, "tasks": n,
        })).collect::<Vec<_>>(),
        "failures_last_day_by_destination": report.failures_by_destination_last_day.iter()
            .map(|(id, n)| json!({ "destination": id.as_str(), "tasks": n }))
            .collect::<Vec<_>>(),
        "deadline_to_delivery_last_hour": report.deadline_to_delivery.map(|l| json!({
            "delivered": l.count, "p50_seconds": seconds(l.p50), "p99_seconds": seconds(l.p99),
        })),
    })
}

/// The database's replication as `--format json` gives it (`null` on an
/// embedded file).
pub fn replication_to_json(replication: Option<&Replication>) -> Value {
    let Some(r) = replication else {
        return Value::Null;
    };
    json!({
        "synchronous_standby_names": r.synchronous_standby_names,
        "synchronous_commit": r.synchronous_commit,
        "in_recovery": r.in_recovery,
        "standbys": r.standbys.iter().map(|s| json!({
            "name": s.name, "state": s.state, "sync_state": s.sync_state,
        })).collect::<Vec<_>>(),
        "synchronous": r.synchronous().iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        "summary": r.summary(),
    })
}

/// The database's replication as one line of the text report.
pub fn replication_to_text(replication: Option<&Replication>) -> String {
    match replication {
        Some(r) => format!("Replication: {}\n", r.summary()),
        None => "Replication: none (an embedded file)\n".into(),
    }
}

/// Where the report was read, when `database.read_url` names a replica
/// (`null` otherwise).
pub fn read_source_to_json(source: Option<&ReadSource>) -> Value {
    let Some(s) = source else {
        return Value::Null;
    };
    json!({
        "replica": s.standby,
        "replayed_at": s.replayed_at,
        "caught_up": s.caught_up,
        "paused": s.paused,
        "lag_seconds": s.lag().map(seconds),
        "summary": s.summary(),
    })
}

/// The same as one line (nothing when the primary was read).
pub fn read_source_to_text(source: Option<&ReadSource>) -> String {
    source.map_or(String::new(), |s| format!("Counts {}.\n", s.summary()))
}

/// Rows of cells, each column padded to its widest cell.
fn table(out: &mut String, rows: &[Vec<String>]) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::from(" ");
        for (c, cell) in row.iter().enumerate() {
            // Text left, numbers right.
            let numeric = cell.chars().next().is_some_and(|ch| ch.is_ascii_digit());
            let pad = widths[c] - cell.chars().count();
            line.push(' ');
            if numeric && c > 0 {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            }
            line.push(' ');
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

pub fn to_text(report: &StatusReport, database: &str) -> String {
    let mut out = format!(
        "remit status at {} ({database})\n\n",
        report.now.format("%Y-%m-%d %H:%M:%S UTC")
    );
    if report.regions.is_empty() {
        out.push_str("No tasks.\n");
    } else {
        let mut rows = vec![[
            "region",
            "pending",
            "leased",
            "retry_wait",
            "delivered",
            "failed",
            "cancelled",
            "oldest eligible",
            "expired leases",
        ]
        .map(String::from)
        .to_vec()];
        for r in &report.regions {
            rows.push(vec![
                r.region.map_or_else(|| "-".into(), |r| r.to_string()),
                r.pending.to_string(),
                r.leased.to_string(),
                r.retry_wait.to_string(),
                r.delivered.to_string(),
                r.failed.to_string(),
                r.cancelled.to_string(),
                r.oldest_eligible.map_or_else(|| "-".into(), human),
                r.expired_leases.to_string(),
            ]);
        }
        table(&mut out, &rows);
    }
    out.push_str("\nPaused destinations:");
    if report.paused.is_empty() {
        out.push_str(" none\n");
    } else {
        out.push('\n');
        let mut rows = vec![vec![
            "destination".into(),
            "region".into(),
            "paused until".into(),
            "left".into(),
        ]];
        for (id, region, until) in &report.paused {
            rows.push(vec![
                id.to_string(),
                region.to_string(),
                until.format("%H:%M:%S UTC").to_string(),
                human(*until - report.now),
            ]);
        }
        table(&mut out, &rows);
    }
    // Only when there are any: the usual answer is none, and it is not
    // one an operator needs to read every time.
    if !report.refused.is_empty() {
        out.push_str(
            "\nRefused by a runtime's address policy in the last 10 minutes (tasks held):\n",
        );
        let mut rows = vec![vec![
            "destination".into(),
            "region".into(),
            "last refused".into(),
            "why".into(),
        ]];
        for r in &report.refused {
            rows.push(vec![
                r.destination.to_string(),
                r.region.to_string(),
                r.last.format("%H:%M:%S UTC").to_string(),
                r.why.clone(),
            ]);
        }
        table(&mut out, &rows);
    }
    if !report.disabled.is_empty() {
        out.push_str("\nDisabled destinations (tasks wait until enabled or past their horizon):\n");
        let mut rows = vec![vec![
            "destination".into(),
            "region".into(),
            "since".into(),
            "last error".into(),
            "reason".into(),
        ]];
        for d in &report.disabled {
            let h = &d.health;
            rows.push(vec![
                d.id.to_string(),
                d.region.to_string(),
                h.disabled_at.map_or("-".into(), crate::words::instant),
                h.last_error.clone().unwrap_or_else(|| "-".into()),
                h.disabled_reason.clone().unwrap_or_else(|| "-".into()),
            ]);
        }
        table(&mut out, &rows);
    }
    let mut top = |title: &str, unit: &str, list: &[(remit::domain::DestinationId, i64)]| {
        out.push_str(&format!("\n{title}:"));
        if list.is_empty() {
            out.push_str(" none\n");
            return;
        }
        out.push('\n');
        let mut rows = vec![vec!["destination".to_owned(), unit.to_owned()]];
        rows.extend(
            list.iter()
                .map(|(id, n)| vec![id.to_string(), n.to_string()]),
        );
        table(&mut out, &rows);
    };
    top("Most tasks in retry_wait", "tasks", &report.top_retry_wait);
    top(
        "Most 429s in the last hour",
        "429s",
        &report.top_rate_limited,
    );
    out.push_str("\nFailed in the last day:");
    if report.failures_last_day.is_empty() {
        out.push_str(" none\n");
    } else {
        out.push('\n');
        let mut rows = vec![vec!["reason".to_owned(), "tasks".to_owned()]];
        rows.extend(
            report
                .failures_last_day
                .iter()
                .map(|(reason, n)| vec![reason.clone(), n.to_string()]),
        );
        table(&mut out, &rows);
        out.push_str("\nFailed in the last day, by destination (the 10 with the most):\n");
        let mut rows = vec![vec!["destination".to_owned(), "tasks".to_owned()]];
        rows.extend(
            report
                .failures_by_destination_last_day
                .iter()
                .map(|(id, n)| vec![id.to_string(), n.to_string()]),
        );
        table(&mut out, &rows);
    }
    out.push_str("\nDeadline to delivery, last hour: ");
    match report.deadline_to_delivery {
        None => out.push_str("no deliveries\n"),
        Some(l) => out.push_str(&format!(
            "p50 {}, p99 {} over {}\n",
            human(l.p50),
            human(l.p99),
            counted(l.count as u64, "delivery")
        )),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(human(Duration::milliseconds(850)), "850ms");
        assert_eq!(human(Duration::milliseconds(12_400)), "12.4s");
        assert_eq!(human(Duration::seconds(185)), "3m05s");
        assert_eq!(human(Duration::minutes(130)), "2h10m");
        assert_eq!(human(Duration::seconds(-3)), "0ms");
    }
}
