//! The console's plots, drawn on the server as inline SVG (no script, no
//! external file, nothing that needs the internet): the overview's last
//! hour, one point per minute, and a destination's last week, one point
//! per hour; a y axis with three labels, an x axis from the span's start
//! to now. Colours come from classes in the style sheet; the CSP forbids
//! style attributes.

use chrono::{DateTime, Duration, Utc};
use maud::{html, Markup};
use remit::domain::{hour_of, DestinationHour};
use remit::store::console::Activity;

const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 200.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

/// One line of a plot: a legend label, a CSS class and a value per point
/// (`None` where there is nothing to show: the line breaks there).
#[derive(Debug)]
struct Series {
    label: &'static str,
    class: &'static str,
    values: Vec<Option<f64>>,
}

/// What a plot's x axis spans.
#[derive(Debug, Clone, Copy)]
enum Span {
    /// The last hour, a point per minute.
    Hour,
    /// The last week, a point per hour.
    Week,
}

impl Span {
    /// The x axis's three labels, with the points they stand under.
    fn labels(self, points: usize) -> [(usize, &'static str); 3] {
        let (first, middle) = match self {
            Span::Hour => ("−60 min", "−30 min"),
            Span::Week => ("−7 days", "−3.5 days"),
        };
        [
            (0, first),
            (points / 2, middle),
            (points.saturating_sub(1), "now"),
        ]
    }
}

pub fn deliveries(activity: &Activity) -> Markup {
    plot(
        "deliveries",
        "Deliveries per second",
        "/s",
        Span::Hour,
        vec![Series {
            label: "delivered",
            class: "series-delivered",
            values: per_minute(activity, |m| m.delivered as f64 / 60.0),
        }],
    )
}

pub fn rate_limited(activity: &Activity) -> Markup {
    plot(
        "rate_limited",
        "429 answers per minute",
        "",
        Span::Hour,
        vec![Series {
            label: "429",
            class: "series-rate-limited",
            values: per_minute(activity, |m| m.rate_limited as f64),
        }],
    )
}

pub fn failures(activity: &Activity) -> Markup {
    plot(
        "failures",
        "Tasks failed per minute",
        "",
        Span::Hour,
        vec![Series {
            label: "failed",
            class: "series-failed",
            values: per_minute(activity, |m| m.failed as f64),
        }],
    )
}

pub fn latency(activity: &Activity) -> Markup {
    let seconds = |d: chrono::Duration| d.num_milliseconds() as f64 / 1000.0;
    plot(
        "latency",
        "Deadline to delivery (seconds)",
        "s",
        Span::Hour,
        vec![
            Series {
                label: "p50",
                class: "series-p50",
                values: activity
                    .minutes
                    .iter()
                    .map(|m| m.deadline_to_delivery.map(|l| seconds(l.p50)))
                    .collect(),
            },
            Series {
                label: "p99",
                class: "series-p99",
                values: activity
                    .minutes
                    .iter()
                    .map(|m| m.deadline_to_delivery.map(|l| seconds(l.p99)))
                    .collect(),
            },
        ],
    )
}

/// A destination's hours over the last week, one slot per hour from 167
/// hours before the current one to the current one; `None` where no
/// attempt ended.
#[derive(Debug)]
pub struct Week<'a> {
    slots: Vec<Option<&'a DestinationHour>>,
}

/// The hours a week's plots span.
pub const WEEK_HOURS: i64 = 168;

impl<'a> Week<'a> {
    /// The first hour of the week that ends with the hour holding `now`.
    pub fn start(now: DateTime<Utc>) -> DateTime<Utc> {
        hour_of(now) - Duration::hours(WEEK_HOURS - 1)
    }

    pub fn new(hours: &'a [DestinationHour], now: DateTime<Utc>) -> Self {
        let start = Self::start(now);
        let mut slots = vec![None; WEEK_HOURS as usize];
        for hour in hours {
            let slot = usize::try_from((hour.hour - start).num_hours()).ok();
            if let Some(slot) = slot.and_then(|i| slots.get_mut(i)) {
                *slot = Some(hour);
            }
        }
        Self { slots }
    }

    /// A count per hour, 0 where nothing ended.
    fn counts(&self, count: impl Fn(&DestinationHour) -> u64) -> Vec<Option<f64>> {
        self.slots
            .iter()
            .map(|h| Some(h.map_or(0.0, |h| count(h) as f64)))
            .collect()
    }

    /// A duration per hour in milliseconds, `None` where none was measured.
    fn millis(&self, value: impl Fn(&DestinationHour) -> Option<Duration>) -> Vec<Option<f64>> {
        self.slots
            .iter()
            .map(|h| {
                h.and_then(&value)
                    .and_then(|d| d.num_microseconds())
                    .map(|us| us as f64 / 1000.0)
            })
            .collect()
    }
}

pub fn week_attempts(week: &Week<'_>) -> Markup {
    plot(
        "attempts",
        "Attempts per hour",
        "",
        Span::Week,
        vec![
            Series {
                label: "attempts",
                class: "series-attempts",
                values: week.counts(|h| h.counts.attempts()),
            },
            Series {
                label: "failed",
                class: "series-failed",
                values: week.counts(|h| h.counts.failed()),
            },
        ],
    )
}

pub fn week_failures(week: &Week<'_>) -> Markup {
    let series = |label, class, count: fn(&DestinationHour) -> u64| Series {
        label,
        class,
        values: week.counts(count),
    };
    plot(
        "failures_by_class",
        "Failed attempts per hour, by class",
        "",
        Span::Week,
        vec![
            series("transport", "series-transport", |h| h.counts.transport),
            series("timeout", "series-timeout", |h| h.counts.timeout),
            series("4xx", "series-client-error", |h| h.counts.client_error),
            series("429", "series-rate-limited", |h| h.counts.rate_limited),
            series("5xx", "series-server-error", |h| h.counts.server_error),
            series("other", "series-other-status", |h| h.counts.other_status),
        ],
    )
}

pub fn week_latency(week: &Week<'_>) -> Markup {
    plot(
        "send_latency",
        "Send latency (ms)",
        "",
        Span::Week,
        vec![
            Series {
                label: "p50",
                class: "series-p50",
                values: week.millis(|h| h.latency.quantile(0.5)),
            },
            Series {
                label: "p99",
                class: "series-p99",
                values: week.millis(|h| h.latency.quantile(0.99)),
            },
        ],
    )
}

pub fn week_lateness(week: &Week<'_>) -> Markup {
    plot(
        "lateness",
        "First-try lateness against not_before, p99 (ms)",
        "",
        Span::Week,
        vec![Series {
            label: "p99",
            class: "series-lateness",
            values: week.millis(|h| h.lateness.quantile(0.99)),
        }],
    )
}

fn per_minute(
    activity: &Activity,
    value: impl Fn(&remit::store::console::MinuteActivity) -> f64,
) -> Vec<Option<f64>> {
    activity.minutes.iter().map(|m| Some(value(m))).collect()
}

fn plot(name: &str, title: &str, unit: &str, span: Span, series: Vec<Series>) -> Markup {
    let top = nice_ceiling(
        series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .fold(0.0_f64, |a, b| a.max(*b)),
    );
    let points = series.first().map_or(0, |s| s.values.len());
    let x = |i: usize| {
        let span = points.saturating_sub(1).max(1) as f64;
        LEFT + (WIDTH - LEFT - RIGHT) * i as f64 / span
    };
    let y = |v: f64| TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - v / top);
    let heading_id = format!("chart-{name}");
    html! {
        figure.chart-box {
            figcaption #(heading_id) { (title) }
            svg.chart data-chart=(name) viewBox=(format!("0 0 {WIDTH} {HEIGHT}"))
                role="img" aria-labelledby=(heading_id) xmlns="http://www.w3.org/2000/svg" {
                @for fraction in [0.0, 0.5, 1.0] {
                    line.grid x1=(LEFT) x2=(WIDTH - RIGHT)
                        y1=(y(top * fraction)) y2=(y(top * fraction)) {}
                    text.axis x=(LEFT - 6.0) y=(y(top * fraction) + 4.0) text-anchor="end" {
                        (label(top * fraction)) (unit)
                    }
                }
                @for (i, text) in span.labels(points) {
                    text.axis x=(x(i)) y=(HEIGHT - 8.0) text-anchor="middle" { (text) }
                }
                @for s in &series {
                    @for run in runs(&s.values) {
                        @if run.len() == 1 {
                            circle class=(s.class) cx=(x(run[0].0)) cy=(y(run[0].1)) r="2" {}
                        } @else {
                            polyline class=(s.class) fill="none" points=(
                                run.iter()
                                    .map(|(i, v)| format!("{:.1},{:.1}", x(*i), y(*v)))
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            ) {}
                        }
                    }
                }
            }
            @if series.len() > 1 {
                ul.legend {
                    @for s in &series {
                        li { span class=(format!("swatch {}", s.class)) {} (s.label) }
                    }
                }
            }
        }
    }
}

/// The unbroken stretches of a series, with each value's minute.
fn runs(values: &[Option<f64>]) -> Vec<Vec<(usize, f64)>> {
    let mut runs = vec![Vec::new()];
    for (i, value) in values.iter().enumerate() {
        match value {
            Some(v) => runs.last_mut().map_or((), |run| run.push((i, *v))),
            None => runs.push(Vec::new()),
        }
    }
    runs.retain(|run| !run.is_empty());
    runs
}

/// The smallest of 1, 2 or 5 times a power of ten that is at least `max`
/// (and at least 1, so an empty hour still has an axis).
fn nice_ceiling(max: f64) -> f64 {
    if !max.is_finite() || max <= 1.0 {
        return 1.0;
    }
    let power = 10f64.powf(max.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|c| *c >= max)
        .unwrap_or(10.0 * power)
}

/// An axis label: whole numbers without decimals, small ones with one.
fn label(value: f64) -> String {
    if (value - value.round()).abs() < 1e-9 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn axes_end_on_round_numbers() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(0.3), 1.0);
        assert_eq!(nice_ceiling(1.5), 2.0);
        assert_eq!(nice_ceiling(3.0), 5.0);
        assert_eq!(nice_ceiling(7.0), 10.0);
        assert_eq!(nice_ceiling(120.0), 200.0);
        assert_eq!(label(0.5), "0.5");
        assert_eq!(label(100.0), "100");
    }

    #[test]
    fn a_line_breaks_where_a_minute_has_nothing() {
        let values = [Some(1.0), Some(2.0), None, None, Some(3.0)];
        assert_eq!(
            runs(&values),
            vec![vec![(0, 1.0), (1, 2.0)], vec![(4, 3.0)]]
        );
    }

    #[test]
    fn a_week_has_a_slot_per_hour_up_to_the_current_one() {
        let now = Utc.with_ymd_and_hms(2026, 12, 23, 10, 30, 0).unwrap();
        let at = |hours_ago: i64| DestinationHour {
            hour: hour_of(now) - Duration::hours(hours_ago),
            ..DestinationHour::default()
        };
        let hours = [at(200), at(167), at(3), at(0), at(-1)];
        let week = Week::new(&hours, now);
        assert_eq!(week.slots.len(), 168);
        let filled: Vec<usize> = (0..168).filter(|i| week.slots[*i].is_some()).collect();
        assert_eq!(filled, vec![0, 164, 167]);
        assert_eq!(Week::start(now), hour_of(now) - Duration::hours(167));
        let svg = week_attempts(&week).into_string();
        assert!(svg.contains(r#"data-chart="attempts""#), "{svg}");
        assert!(svg.contains("−7 days") && svg.contains("now"), "{svg}");
    }
}
