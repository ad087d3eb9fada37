//! The overview's list of the destinations that need a person: disabled
//! (and why), paused by their receiver, failing (a failure streak under
//! way) or with tasks that failed in the last hour, each with what it
//! holds back, so the person on call sees by name where to look first.

use chrono::{DateTime, Utc};
use maud::{html, Markup};
use remit::store::console::DestinationSummary;

use super::layout::instant;

/// What is wrong with a destination, as the overview names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Trouble {
    Disabled,
    Paused,
    Failing,
    FailedRecently,
}

impl Trouble {
    fn label(self) -> &'static str {
        match self {
            Trouble::Disabled => "disabled",
            Trouble::Paused => "paused",
            Trouble::Failing => "failing",
            Trouble::FailedRecently => "failed tasks (1 h)",
        }
    }
}

/// The worst that is wrong with it at `now`, if anything.
pub fn trouble(summary: &DestinationSummary, now: DateTime<Utc>) -> Option<Trouble> {
    let d = &summary.destination;
    if !d.enabled {
        Some(Trouble::Disabled)
    } else if d.paused_until.is_some_and(|until| until > now) {
        Some(Trouble::Paused)
    } else if d.health.failure_streak > 0 {
        Some(Trouble::Failing)
    } else if summary.failed_last_hour > 0 {
        Some(Trouble::FailedRecently)
    } else {
        None
    }
}

/// The section: counts by kind, then each destination in trouble, the
/// worst first.
pub fn section(summaries: &[DestinationSummary], now: DateTime<Utc>) -> Markup {
    let mut troubled: Vec<(Trouble, &DestinationSummary)> = summaries
        .iter()
        .filter_map(|s| trouble(s, now).map(|t| (t, s)))
        .collect();
    troubled.sort_by_key(|(t, s)| (*t, s.destination.id.clone()));
    let count = |kind: Trouble| troubled.iter().filter(|(t, _)| *t == kind).count();
    html! {
        section aria-labelledby="needs-attention" {
            h2 #needs-attention { "Destinations that need attention" }
            @if troubled.is_empty() {
                p data-trouble="none" { "None: every destination is enabled, unpaused and not failing." }
            } @else {
                p {
                    @for kind in [Trouble::Disabled, Trouble::Paused, Trouble::Failing, Trouble::FailedRecently] {
                        span.trouble-count data-trouble-count=(kind.label()) {
                            (count(kind)) " " (kind.label())
                        }
                        " "
                    }
                }
                div.scroll {
                    table #trouble {
                        thead {
                            tr {
                                th scope="col" { "destination" }
                                th scope="col" { "what" }
                                th scope="col" { "since" }
                                th scope="col" { "last error" }
                                th scope="col" { "waiting" }
                                th scope="col" { "failed (1 h)" }
                            }
                        }
                        tbody {
                            @for (kind, s) in &troubled {
                                (row(*kind, s))
                            }
                        }
                    }
                }
            }
        }
    }
}

fn row(kind: Trouble, s: &DestinationSummary) -> Markup {
    let d = &s.destination;
    let since = match kind {
        Trouble::Disabled => d.health.disabled_at,
        Trouble::Paused => d.paused_until,
        Trouble::Failing | Trouble::FailedRecently => d.health.failure_streak_since,
    };
    html! {
        tr data-trouble=(kind.label()) data-destination=(d.id.as_str()) {
            th scope="row" {
                a href=(format!("/console/destinations/{}", d.id.as_str())) { (d.id.as_str()) }
            }
            td {
                (kind.label())
                @if let (Trouble::Disabled, Some(reason)) = (kind, &d.health.disabled_reason) {
                    ": " (reason)
                }
                @if kind == Trouble::Failing {
                    " (" (d.health.failure_streak) " in a row)"
                }
            }
            td { @if let Some(at) = since { @if kind == Trouble::Paused { "until " } (instant(at)) } @else { "—" } }
            td { (d.health.last_error.as_deref().unwrap_or("—")) }
            td.number { (s.due_backlog + s.in_flight) }
            td.number { (s.failed_last_hour) }
        }
    }
}
