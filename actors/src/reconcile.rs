//! `remit reconcile`: reading the ledger, and rendering a report as text
//! or JSON for people and for cron.

use std::path::Path;

use chrono::{DateTime, Utc};
use remit::domain::{Finding, InvalidInput, LedgerEntry, ReconcileReport, ReminderId, TenantId};
use serde_json::{json, Value};

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("ledger {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: csv::Error,
    },
    #[error("ledger {path}, line {line}: {reason}")]
    Row {
        path: String,
        line: u64,
        reason: String,
    },
}

/// Reads a CSV of `tenant_id,reminder_id,due` (a header row with those
/// names; `due` in RFC 3339).
pub fn read_ledger(path: &Path) -> Result<Vec<LedgerEntry>, LedgerError> {
    let shown = path.display().to_string();
    let read_error = |source| LedgerError::Read {
        path: shown.clone(),
        source,
    };
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_path(path)
        .map_err(read_error)?;
    let mut entries = Vec::new();
    for record in reader.deserialize::<(String, String, String)>() {
        let line = entries.len() as u64 + 2;
        let row_error = |reason: String| LedgerError::Row {
            path: shown.clone(),
            line,
            reason,
        };
        let (tenant, reminder, due) = record.map_err(|e| row_error(e.to_string()))?;
        let entry = (|| -> Result<LedgerEntry, InvalidInput> {
            Ok(LedgerEntry {
                tenant_id: TenantId::new(&tenant)?,
                reminder_id: ReminderId::new(&reminder)?,
                due: DateTime::parse_from_rfc3339(&due)
                    .map_err(|e| InvalidInput::new("due", format!("must be RFC 3339 ({e})")))?
                    .with_timezone(&Utc),
            })
        })()
        .map_err(|e| row_error(e.to_string()))?;
        entries.push(entry);
    }
    Ok(entries)
}

fn finding_json(finding: &Finding) -> Value {
    json!({
        "count": finding.count,
        "tasks": finding.tasks.iter().map(|t| json!({
            "id": t.id.to_string(),
            "tenant_id": t.tenant_id.as_str(),
            "reminder_id": t.reminder_id.as_str(),
            "destination_id": t.destination_id.as_str(),
            "region": t.region.as_str(),
            "state": t.state.as_str(),
            "not_before": t.not_before,
            "available_at": t.available_at,
            "lease_owner": t.lease_owner,
            "lease_expires_at": t.lease_expires_at,
            "attempt_count": t.attempt_count,
        })).collect::<Vec<_>>(),
    })
}

pub fn to_json(report: &ReconcileReport) -> Value {
    json!({
        "clean": report.is_clean(),
        "expired_leases": finding_json(&report.expired_leases),
        "reclaimed": report.reclaimed,
        "old_eligible": finding_json(&report.old_eligible),
        "past_horizon": finding_json(&report.past_horizon),
        "terminal": report.terminal.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "missing_from_schedule": report.missing_from_schedule.iter().map(|e| json!({
            "tenant_id": e.tenant_id.as_str(), "reminder_id": e.reminder_id.as_str(), "due": e.due,
        })).collect::<Vec<_>>(),
        "unknown_to_ledger": finding_json(&report.unknown_to_ledger),
    })
}

pub fn to_text(report: &ReconcileReport) -> String {
    let mut out = String::new();
    let mut section = |title: &str, finding: &Finding| {
        out.push_str(&format!("{title}: {}\n", finding.count));
        for t in &finding.tasks {
            out.push_str(&format!(
                "  {} {}/{} -> {} [{}] state={} available_at={} attempts={}{}\n",
                t.id,
                t.tenant_id,
                t.reminder_id,
                t.destination_id,
                t.region,
                t.state.as_str(),
                crate::words::instant(t.available_at),
                t.attempt_count,
                t.lease_owner
                    .as_ref()
                    .map(|o| format!(" lease_owner={o}"))
                    .unwrap_or_default(),
            ));
        }
    };
    section("expired leases", &report.expired_leases);
    section(
        "eligible for longer than the threshold",
        &report.old_eligible,
    );
    section(
        "past their retry horizon, not terminal",
        &report.past_horizon,
    );
    section(
        "due within the ledger's span but not in it",
        &report.unknown_to_ledger,
    );
    out.push_str(&format!(
        "expired leases handed back: {}\n",
        report.reclaimed
    ));
    out.push_str(&format!(
        "in the ledger, not scheduled: {}\n",
        report.missing_from_schedule.len()
    ));
    for e in &report.missing_from_schedule {
        out.push_str(&format!(
            "  {}/{} due {}\n",
            e.tenant_id,
            e.reminder_id,
            crate::words::instant(e.due)
        ));
    }
    out.push_str("terminal:");
    for (outcome, count) in &report.terminal {
        out.push_str(&format!(" {outcome}={count}"));
    }
    out.push('\n');
    out.push_str(if report.is_clean() {
        "all well\n"
    } else {
        "needs attention\n"
    });
    out
}
