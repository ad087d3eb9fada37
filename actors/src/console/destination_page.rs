//! A destination's page: its address, state and last error, an admin's
//! actions (`destination_actions`), and its
//! stats over the last week hour by hour (`Reports::destination_stats`, as the
//! finish kept it): the week's attempts by class, and plots of attempts
//! and failures, failures by class, send latency and first-try lateness.

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::Utc;
use maud::html;
use remit::domain::{hour_of, quoted, AttemptCounts, DestinationId};
use remit::store::{Destinations, Reports};

use serde::Deserialize;

use super::charts::{self, Week};
use super::error::ConsoleError;
use super::layout::{state_text, Page, Section};
use super::session;
use super::state::ConsoleState;
use crate::words;

/// What an action taken on the page came to, as its answer's redirect
/// says.
#[derive(Debug, Default, Deserialize)]
pub struct Done {
    /// Tasks a retry-now made due.
    retried: Option<u64>,
}

/// `GET /console/destinations/{id}`.
pub async fn page(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    id: web::Path<String>,
    done: web::Query<Done>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    viewer.sees_every_tenant()?;
    let id = DestinationId::new(&id)?;
    let destination = state
        .store
        .destination(&id)
        .await?
        .filter(|d| d.region == state.region)
        .ok_or_else(|| {
            ConsoleError::NotFound(format!(
                "no destination {} in {}",
                quoted(id.as_str()),
                state.region
            ))
        })?;
    let now = Utc::now();
    let until = hour_of(now) + chrono::Duration::hours(1);
    let hours = state
        .reports
        .destination_stats(&id, Week::start(now), until)
        .await?;
    let week = Week::new(&hours, now);
    let read_from = super::read_source::note(&state).await;
    let mut total = AttemptCounts::default();
    for hour in &hours {
        total.merge(&hour.counts);
    }
    let title = format!("Destination {}", id.as_str());
    Ok(Page {
        title: &title,
        section: Section::Destinations,
        viewer: Some(&viewer),
        refresh: true,
        body: html! {
            h1 { "Destination " (id.as_str()) }
            (read_from)
            @if let Some(n) = done.retried {
                p.notice role="status" { (words::counted(n, "task")) " waiting for a retry made due now." }
            }
            p.url { (destination.url.as_str()) }
            table #destination {
                tbody {
                    tr { th scope="row" { "state" } td data-field="state" { (state_text(&destination)) } }
                    tr {
                        th scope="row" { "last error" }
                        td data-field="last_error" {
                            (super::layout::last_error(&destination.health))
                        }
                    }
                }
            }
            @if viewer.admin() {
                (super::destination_actions::on_page(&viewer, &destination))
            }
            h2 { "The last 7 days" }
            p {
                "Attempts that ended with an answer or a transport error, by the hour they "
                "ended in (UTC). Latency runs from the request's start to its answer; "
                "lateness from a task's not_before to its first attempt's start. "
                "Percentiles are read from buckets a factor √2 wide, as their upper bound."
            }
            div.scroll {
                table #week-totals {
                    thead {
                        tr {
                            @for name in ["attempts", "succeeded", "transport", "timeout", "4xx", "429", "5xx", "other"] {
                                th scope="col" { (name) }
                            }
                        }
                    }
                    tbody {
                        tr {
                            td.number data-count="attempts" { (total.attempts()) }
                            td.number data-count="succeeded" { (total.succeeded) }
                            td.number data-count="transport" { (total.transport) }
                            td.number data-count="timeout" { (total.timeout) }
                            td.number data-count="client_error" { (total.client_error) }
                            td.number data-count="rate_limited" { (total.rate_limited) }
                            td.number data-count="server_error" { (total.server_error) }
                            td.number data-count="other_status" { (total.other_status) }
                        }
                    }
                }
            }
            div.charts {
                (charts::week_attempts(&week))
                (charts::week_failures(&week))
                (charts::week_latency(&week))
                (charts::week_lateness(&week))
            }
        },
    }
    .render())
}
