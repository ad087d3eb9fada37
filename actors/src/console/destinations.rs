//! The destinations page: each destination of the region with its state
//! (active, paused until, disabled and why), configured and announced
//! rate, tasks in flight, due backlog, tasks retrying, how long its oldest
//! reminder has waited past its deadline, its last error and when (gone
//! once it recovers), and its 429s and failures in the last hour (replayed
//! failures included); and, for an admin token, its actions
//! (`destination_actions`).

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::Utc;
use maud::{html, Markup};
use remit::store::console::DestinationSummary;
use remit::store::Reports;

use super::error::ConsoleError;
use super::layout::{instant, last_error, state_text, waited, Page, Section};
use super::session;
use super::session::Viewer;
use super::state::ConsoleState;

/// `GET /console/destinations`.
pub async fn page(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    viewer.sees_every_tenant()?;
    let summaries = state.reports.destination_summaries(state.region).await?;
    let read_from = super::read_source::note(&state).await;
    let now = Utc::now();
    Ok(Page {
        title: "Destinations",
        section: Section::Destinations,
        viewer: Some(&viewer),
        refresh: true,
        body: html! {
            h1 { "Destinations in " (state.region.to_string()) }
            (read_from)
            @if summaries.is_empty() {
                p { "No destination is registered in this region." }
            } @else {
                div.scroll {
                    table #destinations {
                        thead {
                            tr {
                                th scope="col" { "destination" }
                                th scope="col" { "state" }
                                th scope="col" { "rate" }
                                th scope="col" { "in flight" }
                                th scope="col" { "due backlog" }
                                th scope="col" { "retrying" }
                                th scope="col" { "oldest wait" }
                                th scope="col" { "last error" }
                                th scope="col" { "429s (1 h)" }
                                th scope="col" { "failed (1 h)" }
                                @if viewer.admin() { th scope="col" { "actions" } }
                            }
                        }
                        tbody {
                            @for summary in &summaries {
                                (row(&state, &viewer, summary, now))
                            }
                        }
                    }
                }
            }
        },
    }
    .render())
}

fn row(
    state: &ConsoleState,
    viewer: &Viewer,
    summary: &DestinationSummary,
    now: chrono::DateTime<Utc>,
) -> Markup {
    let d = &summary.destination;
    let file = state
        .throttle
        .destinations
        .get(d.id.as_str())
        .copied()
        .unwrap_or(state.throttle.default);
    let rate = d.settings.rate_per_second.unwrap_or(file.rate_per_second);
    let tasks = format!(
        "/console/tasks?{}",
        url::form_urlencoded::Serializer::new(String::new())
            .append_pair("destination", d.id.as_str())
            .finish()
    );
    html! {
        tr data-destination=(d.id.as_str()) {
            th scope="row" {
                a href=(tasks) { (d.id.as_str()) }
                br;
                span.url { (d.url.as_str()) }
                br;
                a.health href=(super::layout::destination_path(&d.id)) { "health, last 7 days" }
            }
            td data-field="state" { (state_text(d)) }
            td data-field="rate" {
                (rate) "/s configured"
                @if let Some(q) = &summary.learned_quota {
                    br;
                    "announced: " (format!("{:.0}", q.remaining))
                    @if let Some(limit) = q.limit { " of " (limit) }
                    " left until " (instant(q.resets_at))
                }
            }
            td.number data-field="in_flight" { (summary.in_flight) }
            td.number data-field="backlog" { (summary.due_backlog) }
            td.number data-field="retrying" { (summary.retrying) }
            td data-field="oldest_wait" { (waited(summary.oldest_due, now)) }
            td data-field="last_error" { (last_error(&d.health)) }
            td.number data-field="rate_limited" { (summary.rate_limited_last_hour) }
            td.number data-field="failed" { (summary.failed_last_hour) }
            @if viewer.admin() {
                td.actions { (super::destination_actions::in_list(viewer, d)) }
            }
        }
    }
}
