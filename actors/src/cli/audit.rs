//! `remit audit`: the audit log of admin actions, newest first, with the
//! filters of `GET /v1/audit`, as a table or as the API's JSON.

use remit::store::Reports;
use remit_actors::api::{AuditEntryView, AuditList, AuditQuery};
use remit_actors::words;

use super::connect::connect_without_payloads;
use super::error::CliError;
use super::report_format::ReportFormat;

/// Which entries to show; every flag given narrows the list.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    /// Only this action, e.g. `destination.disable`, `token.create`.
    #[arg(long)]
    pub action: Option<String>,
    /// Only actions on this kind of target: token, destination, task,
    /// tenant, job, import or payload_key.
    #[arg(long)]
    pub target_kind: Option<String>,
    /// Only actions on the target with this id.
    #[arg(long)]
    pub target_id: Option<String>,
    /// Only this actor: a token's id, a user of the command line, or a
    /// kind (token, bootstrap, cli, system).
    #[arg(long)]
    pub actor: Option<String>,
    /// Only entries at or after this instant (RFC 3339).
    #[arg(long)]
    pub since: Option<String>,
    /// Only entries before this instant (RFC 3339).
    #[arg(long)]
    pub until: Option<String>,
    /// Entries older than this one: the `next` a page ends with.
    #[arg(long)]
    pub before: Option<String>,
    /// At most this many entries, 1 to 500.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,
}

impl AuditArgs {
    fn query(&self) -> AuditQuery {
        AuditQuery {
            action: self.action.clone(),
            target_kind: self.target_kind.clone(),
            target_id: self.target_id.clone(),
            actor: self.actor.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
            before: self.before.clone(),
            limit: Some(self.limit),
        }
    }
}

pub async fn run(config: &remit_actors::config::Config, args: AuditArgs) -> Result<(), CliError> {
    let (filter, before, limit) = args
        .query()
        .filter()
        .map_err(|e| CliError::Usage(format!("--{}: {}", e.field.replace('_', "-"), e.reason)))?;
    let store = connect_without_payloads(config).await?;
    let page = store.audit_entries(&filter, before, limit).await?;
    let list = AuditList {
        entries: page.entries.iter().map(AuditEntryView::from).collect(),
        next: page.next,
    };
    match args.format {
        ReportFormat::Json => {
            let text = serde_json::to_string_pretty(&list)
                .map_err(|e| CliError::Usage(format!("could not write JSON: {e}")))?;
            println!("{text}");
        }
        ReportFormat::Text => print!("{}", to_text(&list)),
    }
    Ok(())
}

/// One line per entry, newest first, then where the next page starts.
fn to_text(list: &AuditList) -> String {
    if list.entries.is_empty() {
        return "no audit entries\n".into();
    }
    let mut out = String::new();
    for e in &list.entries {
        out.push_str(&format!(
            "{:>6}  {}  {:<28}  {:<26}  {} {}  {}\n",
            e.id,
            words::instant(e.at),
            who(e),
            e.action,
            e.target.kind,
            e.target.id,
            e.region.as_deref().unwrap_or("-"),
        ));
    }
    if let Some(next) = list.next {
        out.push_str(&format!("more: remit audit --before {next}\n"));
    }
    out
}

/// `token tok_… (name)`, `cli alice`, `bootstrap`, `system`.
fn who(e: &AuditEntryView) -> String {
    let a = &e.actor;
    match (&a.id, &a.name) {
        (Some(id), Some(name)) => format!("{} {id} ({name})", a.kind),
        (Some(id), None) => format!("{} {id}", a.kind),
        _ => a.kind.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use remit_actors::api::{ActorView, TargetView};

    #[test]
    fn each_entry_is_one_line_and_the_next_page_is_named() {
        let entry = AuditEntryView {
            id: 7,
            at: chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
            actor: ActorView {
                kind: "cli".into(),
                id: Some("alice".into()),
                name: None,
            },
            action: "destination.disable".into(),
            target: TargetView {
                kind: "destination".into(),
                id: "crm".into(),
            },
            region: Some("eu".into()),
            before: None,
            after: None,
        };
        let text = to_text(&AuditList {
            entries: vec![entry],
            next: Some(7),
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        for part in [
            "7",
            "2027-01-15T08:00:00Z",
            "cli alice",
            "destination.disable",
            "destination crm",
            "eu",
        ] {
            assert!(lines[0].contains(part), "{part} in {text}");
        }
        assert_eq!(lines[1], "more: remit audit --before 7");
        let empty = to_text(&AuditList {
            entries: vec![],
            next: None,
        });
        assert_eq!(empty, "no audit entries\n");
    }
}
