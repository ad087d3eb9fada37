//! The overview: a region's tasks by state, its oldest eligible wait and
//! expired leases (counted by the same statements as `remit status`, so
//! the numbers are the same), the destinations that need attention
//! (`trouble`), and the last hour as plots. It refreshes itself.

use actix_web::{web, HttpRequest, HttpResponse};
use maud::html;
use remit::store::RegionStatus;
use remit::store::Reports;

use super::charts;
use super::error::ConsoleError;
use super::layout::{Page, Section};
use super::read_source;
use super::session;
use super::state::ConsoleState;
use super::trouble;

/// `GET /console/overview`: the region this process serves, and no other
/// (a region's data stays with the hosts that serve it).
pub async fn page(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    viewer.sees_every_tenant()?;
    let region = state.region;
    // Two reads of their own, at once: the page waits for the slower only.
    // The counts are `remit status`'s own, without the rest of its report.
    let (report, activity, summaries) = futures_util::future::try_join3(
        state.reports.region_counts(region),
        state.reports.activity(region),
        state.reports.destination_summaries(region),
    )
    .await?;
    let read_from = read_source::note(&state).await;
    let counts = report.counts;
    let oldest = counts.oldest_eligible.map_or(0, |d| d.num_seconds().max(0));
    let title = format!("Overview of {region}");
    Ok(Page {
        title: &title,
        section: Section::Overview,
        viewer: Some(&viewer),
        refresh: true,
        body: html! {
            h1 { "Region " (region.to_string()) }
            section aria-labelledby="tasks-by-state" {
                h2 #tasks-by-state { "Tasks by state" }
                dl.counts {
                    @for (name, value) in named_counts(&counts) {
                        div {
                            dt { (name) }
                            dd data-count=(name) { (value) }
                        }
                    }
                    div {
                        dt { "oldest eligible wait (s)" }
                        dd data-oldest-eligible-seconds=(oldest) { (oldest) }
                    }
                }
                p.hint { "Updated " (super::layout::instant(report.now)) "; the page refreshes every 5 seconds." }
                (read_from)
            }
            (trouble::section(&summaries, report.now, state.runtime.late_after_seconds))
            section aria-labelledby="last-hour" {
                h2 #last-hour { "The last hour" }
                div.charts {
                    (charts::deliveries(&activity))
                    (charts::rate_limited(&activity))
                    (charts::failures(&activity))
                    (charts::latency(&activity))
                }
            }
            section aria-labelledby="failures-by-reason" {
                h2 #failures-by-reason { "Failures in the last hour, by reason" }
                @if activity.failures_by_reason.is_empty() {
                    p { "None." }
                } @else {
                    div.scroll {
                        table #failures {
                            thead { tr { th scope="col" { "reason" } th scope="col" { "tasks" } } }
                            tbody {
                                @for (reason, count) in &activity.failures_by_reason {
                                    tr data-reason=(reason) {
                                        td { (reason) }
                                        td.number { (count) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        },
    }
    .render())
}

/// The counts by the names `remit status --format json` gives them.
fn named_counts(counts: &RegionStatus) -> [(&'static str, i64); 7] {
    [
        ("pending", counts.pending),
        ("leased", counts.leased),
        ("retry_wait", counts.retry_wait),
        ("delivered", counts.delivered),
        ("failed", counts.failed),
        ("cancelled", counts.cancelled),
        ("expired_leases", counts.expired_leases),
    ]
}
