//! GET /v1/destinations/{id}/stats: a destination's stats hour by hour,
//! as the finish kept it (`remit::domain::DestinationHour`): attempts,
//! failures by class, send latency and first-try lateness percentiles.

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Duration, Utc};
use remit::domain::{hour_of, quoted, DestinationHour, DestinationId, InvalidInput};
use remit::store::{Destinations, Reports};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::error::ApiError;
use super::error::ErrorBody;
use super::replays::instant;
use super::state::ApiState;

/// The hours answered when neither `hours` nor `since` is given.
const DEFAULT_HOURS: i64 = 24;
/// The widest window, in hours (31 days); hours are kept
/// `retention.stats_keep_days` (7 by default).
pub const MAX_HOURS: i64 = 744;

/// Which hours to answer: the last `hours` (the current one included), or
/// those from `since` to `until`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StatsQuery {
    /// The last this many hours, the current one included: 1 to 744 (24
    /// when neither this nor `since` is given). Not with `since` or
    /// `until`.
    #[param(minimum = 1, maximum = 744)]
    pub hours: Option<i64>,
    /// From the hour that holds this instant, RFC 3339.
    #[param(format = DateTime)]
    pub since: Option<String>,
    /// Up to this instant (exclusive: an hour starting at or after it is
    /// left out), RFC 3339; now when absent. At most 744 hours after
    /// `since`.
    #[param(format = DateTime)]
    pub until: Option<String>,
}

impl StatsQuery {
    /// The window asked for at `now`: the first hour's start and the end,
    /// every parameter checked (an error names it).
    pub fn window(
        &self,
        now: DateTime<Utc>,
    ) -> Result<(DateTime<Utc>, DateTime<Utc>), InvalidInput> {
        if let Some(hours) = self.hours {
            if self.since.is_some() || self.until.is_some() {
                return Err(InvalidInput::new(
                    "hours",
                    "give either hours, or since (and until), not both",
                ));
            }
            return last_hours(hours, now);
        }
        let until = match &self.until {
            Some(text) => instant("until", text)?,
            None => now,
        };
        let Some(since) = &self.since else {
            if self.until.is_some() {
                return Err(InvalidInput::new("since", "is required with until"));
            }
            return last_hours(DEFAULT_HOURS, now);
        };
        let since = hour_of(instant("since", since)?);
        if since >= until {
            return Err(InvalidInput::new(
                "since",
                "must be before until (now when until is absent)",
            ));
        }
        if until - since > Duration::hours(MAX_HOURS) {
            return Err(InvalidInput::new(
                "since",
                format!("must be at most {MAX_HOURS} hours before until"),
            ));
        }
        Ok((since, until))
    }
}

/// The last `hours` hours before `now`, the one holding `now` included.
fn last_hours(
    hours: i64,
    now: DateTime<Utc>,
) -> Result<(DateTime<Utc>, DateTime<Utc>), InvalidInput> {
    if !(1..=MAX_HOURS).contains(&hours) {
        return Err(InvalidInput::new(
            "hours",
            format!("must be from 1 to {MAX_HOURS}"),
        ));
    }
    let current = hour_of(now);
    Ok((
        current - Duration::hours(hours - 1),
        current + Duration::hours(1),
    ))
}

/// A destination's hours.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "destination_id": "crm",
    "since": "2026-12-23T09:00:00Z",
    "until": "2026-12-23T11:00:00Z",
    "hours": [{
        "hour": "2026-12-23T10:00:00Z", "attempts": 120, "succeeded": 112, "failed": 8,
        "failures": {"transport": 1, "timeout": 2, "client_error": 1, "rate_limited": 3,
                     "server_error": 1, "other_status": 0},
        "latency_ms": {"p50": 90.51, "p99": 724.077},
        "lateness_ms": {"p99": 45.255}
    }]
}))]
pub struct DestinationStats {
    pub destination_id: String,
    /// The window's first hour.
    pub since: DateTime<Utc>,
    /// The window's end (exclusive).
    pub until: DateTime<Utc>,
    /// Oldest first; an hour in which no attempt ended is left out.
    pub hours: Vec<HourView>,
}

/// One hour of a destination's attempts.
#[derive(Debug, Serialize, ToSchema)]
pub struct HourView {
    /// The hour's start (UTC): attempts recorded from then, for an hour.
    pub hour: DateTime<Utc>,
    /// Attempts that ended with an answer or a transport error:
    /// `succeeded` plus `failed`.
    pub attempts: u64,
    /// 2xx answers.
    pub succeeded: u64,
    /// Every other attempt: the sum of `failures`.
    pub failed: u64,
    pub failures: FailureCounts,
    /// Send latency (request start to answer, or to the transport error):
    /// every attempt's.
    pub latency_ms: LatencyView,
    /// Lateness (the task's `not_before` to its first attempt's start):
    /// first attempts only.
    pub lateness_ms: LatenessView,
}

/// Failed attempts by class.
#[derive(Debug, Serialize, ToSchema)]
pub struct FailureCounts {
    /// No answer: connect, TLS or I/O failures, an address the send policy
    /// refused. Not timeouts.
    pub transport: u64,
    /// No answer within the send timeout.
    pub timeout: u64,
    /// 4xx answers other than 429.
    pub client_error: u64,
    /// 429 answers.
    pub rate_limited: u64,
    /// 5xx answers.
    pub server_error: u64,
    /// 1xx and 3xx answers (redirects are not followed).
    pub other_status: u64,
}

/// Percentiles of the hour's send latency, in milliseconds: the upper
/// bound of the histogram bucket that holds each (at most 41% above the
/// true value, never below it); `null` when nothing was measured.
#[derive(Debug, Serialize, ToSchema)]
pub struct LatencyView {
    #[schema(required = true)]
    pub p50: Option<f64>,
    #[schema(required = true)]
    pub p99: Option<f64>,
}

/// The 99th percentile of the hour's first-try lateness, in milliseconds,
/// read as `LatencyView`'s are; `null` when no first attempt ended.
#[derive(Debug, Serialize, ToSchema)]
pub struct LatenessView {
    #[schema(required = true)]
    pub p99: Option<f64>,
}

fn millis(d: Option<Duration>) -> Option<f64> {
    d.and_then(|d| d.num_microseconds())
        .map(|us| us as f64 / 1000.0)
}

impl From<&DestinationHour> for HourView {
    fn from(h: &DestinationHour) -> Self {
        let c = &h.counts;
        Self {
            hour: h.hour,
            attempts: c.attempts(),
            succeeded: c.succeeded,
            failed: c.failed(),
            failures: FailureCounts {
                transport: c.transport,
                timeout: c.timeout,
                client_error: c.client_error,
                rate_limited: c.rate_limited,
                server_error: c.server_error,
                other_status: c.other_status,
            },
            latency_ms: LatencyView {
                p50: millis(h.latency.quantile(0.5)),
                p99: millis(h.latency.quantile(0.99)),
            },
            lateness_ms: LatenessView {
                p99: millis(h.lateness.quantile(0.99)),
            },
        }
    }
}

/// Read a destination's stats by the hour
///
/// Per hour: attempts that ended (with an answer or a transport error),
/// failures by class, p50 and p99 send latency, and p99 lateness of first
/// attempts against their `not_before`. Hours are kept
/// `retention.stats_keep_days` (7 by default) after they end. Another
/// region's destination is answered like a missing one.
#[utoipa::path(
    get,
    path = "/v1/destinations/{id}/stats",
    operation_id = "get_destination_stats",
    tag = "destinations",
    params(
        (
            "id" = String,
            Path,
            description = "The destination's id: not blank, at most 200 bytes (UTF-8), no control characters",
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$",
        ),
        StatsQuery,
    ),
    responses(
        (status = 200, description = "The destination's hours", body = DestinationStats),
        (status = 400, description = "A parameter this endpoint does not take, or not of its type", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope does not allow this", body = ErrorBody),
        (status = 404, description = "No such destination in this region", body = ErrorBody),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<ApiState>,
    id: web::Path<String>,
    query: web::Query<StatsQuery>,
) -> Result<HttpResponse, ApiError> {
    let id = DestinationId::new(&id)?;
    let (since, until) = query.window(Utc::now())?;
    let known = state
        .store
        .destination(&id)
        .await?
        .is_some_and(|d| d.region == state.rules.serving);
    if !known {
        return Err(ApiError::NotFound(format!(
            "no destination {}",
            quoted(id.as_str())
        )));
    }
    let hours = state.reports.destination_stats(&id, since, until).await?;
    Ok(HttpResponse::Ok().json(DestinationStats {
        destination_id: id.as_str().to_owned(),
        since,
        until,
        hours: hours.iter().map(HourView::from).collect(),
    }))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 23, 10, 30, 0).unwrap()
    }

    fn query(hours: Option<i64>, since: Option<&str>, until: Option<&str>) -> StatsQuery {
        StatsQuery {
            hours,
            since: since.map(str::to_owned),
            until: until.map(str::to_owned),
        }
    }

    fn field(q: StatsQuery) -> &'static str {
        q.window(now()).unwrap_err().field
    }

    #[test]
    fn the_last_hours_end_after_the_current_one() {
        let ten = Utc.with_ymd_and_hms(2026, 12, 23, 10, 0, 0).unwrap();
        let eleven = ten + Duration::hours(1);
        assert_eq!(
            query(None, None, None).window(now()).unwrap(),
            (ten - Duration::hours(23), eleven)
        );
        assert_eq!(
            query(Some(1), None, None).window(now()).unwrap(),
            (ten, eleven)
        );
        assert_eq!(
            query(None, Some("2026-12-23T08:59:59Z"), None)
                .window(now())
                .unwrap(),
            (ten - Duration::hours(2), now())
        );
    }

    #[test]
    fn a_bad_window_names_its_field() {
        assert_eq!(field(query(Some(0), None, None)), "hours");
        assert_eq!(field(query(Some(745), None, None)), "hours");
        assert_eq!(
            field(query(Some(5), Some("2026-12-23T08:00:00Z"), None)),
            "hours"
        );
        assert_eq!(field(query(None, Some("yesterday"), None)), "since");
        assert_eq!(
            field(query(None, Some("2026-12-23T11:00:00Z"), None)),
            "since"
        );
        assert_eq!(
            field(query(None, Some("2026-11-01T00:00:00Z"), None)),
            "since"
        );
        assert_eq!(
            field(query(None, None, Some("2026-12-23T08:00:00Z"))),
            "since"
        );
        assert_eq!(
            field(query(None, Some("2026-12-23T08:00:00Z"), Some("soon"))),
            "until"
        );
    }
}
