//! `GET /console/audit`: the audit log of admin actions, newest first, with
//! the filters of `GET /v1/audit` (times also as the task search takes
//! them, `2026-12-04T09:30` in UTC), for admin tokens that see every
//! tenant. One line an act: what it changed, as a compact diff of the
//! settings before and after (`audit_diff`); they never hold a secret.

use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use remit::domain::{AuditAction, AuditEntry, AuditFilter, TargetKind};
use serde::Deserialize;

use super::audit_diff;
use super::error::ConsoleError;
use super::layout::{instant, Page, Section};
use super::search::{time, Search};
use super::session;
use super::state::ConsoleState;
use remit::store::Reports;

/// Entries on one page.
const PAGE_SIZE: u32 = 50;

/// The form's fields, as typed (blank is "any").
#[derive(Debug, Default, Deserialize)]
pub struct AuditForm {
    pub action: Option<String>,
    pub target_kind: Option<String>,
    pub target_id: Option<String>,
    pub actor: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub before: Option<String>,
}

impl AuditForm {
    fn filter(&self) -> Result<(AuditFilter, Option<i64>), ConsoleError> {
        let get = Search::get;
        let filter = AuditFilter {
            action: get(&self.action)
                .map(AuditFilter::parse_action)
                .transpose()?,
            target_kind: get(&self.target_kind)
                .map(AuditFilter::parse_target_kind)
                .transpose()?,
            target_id: get(&self.target_id)
                .map(|t| AuditFilter::parse_text("target_id", t))
                .transpose()?,
            actor: get(&self.actor)
                .map(|a| AuditFilter::parse_text("actor", a))
                .transpose()?,
            since: get(&self.since).map(|v| time(v, "since")).transpose()?,
            until: get(&self.until).map(|v| time(v, "until")).transpose()?,
        };
        let before = get(&self.before)
            .map(|v| {
                v.parse::<i64>()
                    .map_err(|_| ConsoleError::bad("before", "must be an entry's id"))
            })
            .transpose()?;
        Ok((filter, before))
    }

    /// The link to the page of entries older than `next`, with the same
    /// filters.
    fn next_page(&self, next: i64) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in [
            ("action", &self.action),
            ("target_kind", &self.target_kind),
            ("target_id", &self.target_id),
            ("actor", &self.actor),
            ("since", &self.since),
            ("until", &self.until),
        ] {
            if let Some(value) = Search::get(value) {
                query.append_pair(name, value);
            }
        }
        query.append_pair("before", &next.to_string());
        format!("/console/audit?{}", query.finish())
    }
}

pub async fn page(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    query: web::Query<AuditForm>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    viewer.may_act()?;
    viewer.sees_every_tenant()?;
    let (filter, before) = query.filter()?;
    let found = state
        .reports
        .audit_entries(&filter, before, PAGE_SIZE)
        .await?;
    let read_from = super::read_source::note(&state).await;
    Ok(Page {
        title: "Audit log",
        section: Section::Audit,
        viewer: Some(&viewer),
        refresh: false,
        body: html! {
            h1 { "Audit log" }
            (read_from)
            p { "Every admin action, newest first: who, what, on what, and what it changed in the settings (a field's whole value is in its tooltip). Secrets are never recorded." }
            (form(&query))
            @if found.entries.is_empty() {
                p #no-entries { "No entry matches." }
            } @else {
                div.scroll {
                    table #audit {
                        thead {
                            tr {
                                th scope="col" { "#" }
                                th scope="col" { "at" }
                                th scope="col" { "who" }
                                th scope="col" { "action" }
                                th scope="col" { "target" }
                                th scope="col" { "region" }
                                th scope="col" { "change" }
                            }
                        }
                        tbody {
                            @for entry in &found.entries { (row(entry)) }
                        }
                    }
                }
                @if let Some(next) = found.next {
                    p { a href=(query.next_page(next)) rel="next" { "Older entries" } }
                }
            }
        },
    }
    .render())
}

fn form(query: &AuditForm) -> Markup {
    let value = |field: &Option<String>| Search::get(field).unwrap_or("").to_owned();
    let field = |name: &str, label: &str, current: String, hint: &str| {
        html! {
            div.field {
                label for=(format!("audit-{name}")) { (label) }
                input id=(format!("audit-{name}")) name=(name) type="text" value=(current)
                    placeholder=(hint);
            }
        }
    };
    let select = |name: &str, label: &str, current: String, options: Vec<&'static str>| {
        html! {
            div.field {
                label for=(format!("audit-{name}")) { (label) }
                select id=(format!("audit-{name}")) name=(name) {
                    option value="" { "any" }
                    @for option in options {
                        @if current == option {
                            option value=(option) selected { (option) }
                        } @else {
                            option value=(option) { (option) }
                        }
                    }
                }
            }
        }
    };
    let actions = AuditAction::ALL.iter().map(|a| a.as_str()).collect();
    let kinds = TargetKind::ALL.iter().map(|k| k.as_str()).collect();
    html! {
        form #audit-search method="get" action="/console/audit" {
            (select("action", "Action", value(&query.action), actions))
            (select("target_kind", "Target kind", value(&query.target_kind), kinds))
            (field("target_id", "Target id", value(&query.target_id), ""))
            (field("actor", "Who", value(&query.actor), "tok_…, a user, cli, bootstrap"))
            (field("since", "Since (UTC)", value(&query.since), "2026-12-04T09:30"))
            (field("until", "Until (UTC)", value(&query.until), "2026-12-04T18:00"))
            button #audit-button type="submit" { "Search" }
        }
    }
}

/// A target's id as its column shows it: a long one (a job's UUID) by its
/// first characters, whole in the cell's title.
fn target_id(id: &str) -> String {
    const SHOWN: usize = 13;
    if id.chars().count() <= SHOWN + 7 {
        return id.to_owned();
    }
    let start: String = id.chars().take(SHOWN).collect();
    format!("{start}…")
}

fn row(e: &AuditEntry) -> Markup {
    let who = match (e.actor.id(), e.actor.name()) {
        (Some(id), Some(name)) => format!("{} {id} ({name})", e.actor.kind()),
        (Some(id), None) => format!("{} {id}", e.actor.kind()),
        _ => e.actor.kind().to_owned(),
    };
    let changes = audit_diff::changes(e.before.as_ref(), e.after.as_ref());
    let (created, deleted) = (e.before.is_none(), e.after.is_none() && e.before.is_some());
    html! {
        tr data-entry-id=(e.id) {
            td { (e.id) }
            td { (instant(e.at)) }
            td { (who) }
            td { (e.action.as_str()) }
            td title=(format!("{} {}", e.target.kind.as_str(), e.target.id)) {
                (e.target.kind.as_str()) " " (target_id(&e.target.id))
            }
            td { (e.region.map_or("—".to_owned(), |r| r.to_string())) }
            td.change title=(audit_diff::text(&changes, created, deleted)) {
                (audit_diff::line(&changes, created, deleted))
            }
        }
    }
}
