//! The overview's list of the destinations that need a person: disabled
//! (and why), paused by their receiver, failing (a failure streak under
//! way), late (a reminder still waiting longer after its deadline than the
//! destination's `late_after_seconds`, else `events.late_after_seconds`:
//! the same test as the `reminder.late` event), or with tasks that failed
//! in the last hour, each with what it holds back, so the person on call
//! sees by name where to look first.

use chrono::{DateTime, Duration, Utc};
use maud::{html, Markup};
use remit::store::console::DestinationSummary;

use super::layout::{instant, last_error, waited};

/// What is wrong with a destination, as the overview names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Trouble {
    Disabled,
    Paused,
    Failing,
    Late,
    FailedRecently,
}

impl Trouble {
    fn label(self) -> &'static str {
        match self {
            Trouble::Disabled => "disabled",
            Trouble::Paused => "paused",
            Trouble::Failing => "failing",
            Trouble::Late => "late",
            Trouble::FailedRecently => "failed tasks (1 h)",
        }
    }
}

/// When a destination's reminders count as late: its own setting, else
/// the runtime's (`None`: never).
pub fn late_after(summary: &DestinationSummary, default: Option<u64>) -> Option<Duration> {
    match summary.destination.settings.late_after_seconds {
        Some(own) => Some(Duration::seconds(own)),
        None => default.map(|s| Duration::seconds(i64::try_from(s).unwrap_or(i64::MAX))),
    }
}

/// The worst that is wrong with it at `now`, if anything; `default_late`
/// is `events.late_after_seconds`.
pub fn trouble(
    summary: &DestinationSummary,
    now: DateTime<Utc>,
    default_late: Option<u64>,
) -> Option<Trouble> {
    let d = &summary.destination;
    let late = match (summary.oldest_due, late_after(summary, default_late)) {
        (Some(due), Some(after)) => now - due >= after,
        _ => false,
    };
    if !d.enabled {
        Some(Trouble::Disabled)
    } else if d.paused_until.is_some_and(|until| until > now) {
        Some(Trouble::Paused)
    } else if d.health.failure_streak > 0 {
        Some(Trouble::Failing)
    } else if late {
        Some(Trouble::Late)
    } else if summary.failed_last_hour > 0 {
        Some(Trouble::FailedRecently)
    } else {
        None
    }
}

/// The section: counts by kind, then each destination in trouble, the
/// worst first.
pub fn section(
    summaries: &[DestinationSummary],
    now: DateTime<Utc>,
    default_late: Option<u64>,
) -> Markup {
    let mut troubled: Vec<(Trouble, &DestinationSummary)> = summaries
        .iter()
        .filter_map(|s| trouble(s, now, default_late).map(|t| (t, s)))
        .collect();
    troubled.sort_by_key(|(t, s)| (*t, s.destination.id.clone()));
    let count = |kind: Trouble| troubled.iter().filter(|(t, _)| *t == kind).count();
    html! {
        section aria-labelledby="needs-attention" {
            h2 #needs-attention { "Destinations that need attention" }
            @if troubled.is_empty() {
                p data-trouble="none" { "None: every destination is enabled, unpaused, not failing and not late." }
            } @else {
                p {
                    @for kind in [Trouble::Disabled, Trouble::Paused, Trouble::Failing, Trouble::Late, Trouble::FailedRecently] {
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
                                th scope="col" { "due or sending" }
                                th scope="col" { "retrying" }
                                th scope="col" { "oldest wait" }
                                th scope="col" { "failed (1 h)" }
                            }
                        }
                        tbody {
                            @for (kind, s) in &troubled {
                                (row(*kind, s, now))
                            }
                        }
                    }
                }
            }
        }
    }
}

fn row(kind: Trouble, s: &DestinationSummary, now: DateTime<Utc>) -> Markup {
    let d = &s.destination;
    let since = match kind {
        Trouble::Disabled => d.health.disabled_at,
        Trouble::Paused => d.paused_until,
        Trouble::Late => s.oldest_due,
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
            td { (last_error(&d.health)) }
            td.number data-field="due" { (s.due_backlog + s.in_flight) }
            td.number data-field="retrying" { (s.retrying) }
            td data-field="oldest_wait" { (waited(s.oldest_due, now)) }
            td.number { (s.failed_last_hour) }
        }
    }
}
