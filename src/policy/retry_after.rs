//! Retry-After per RFC 9110 §10.2.3: delay-seconds or an HTTP-date.

use chrono::{DateTime, Duration, Utc};

/// The instant a Retry-After value names, on this host's clock, measured
/// from when the response was received. `None` for an absent, empty,
/// negative or unparseable value, so the caller falls back to local
/// backoff. A date in the past means now.
///
/// An HTTP-date is on the receiver's clock. When the response carried its
/// own `Date`, the wait is the difference of the two (both the receiver's),
/// so neither clock's error matters; otherwise it is measured from the local
/// receipt time.
pub fn parse_retry_after(
    raw: &str,
    received_at: DateTime<Utc>,
    server_date: Option<DateTime<Utc>>,
) -> Option<DateTime<Utc>> {
    let value = raw.trim();
    if value.is_empty() {
        return None;
    }
    if value.bytes().all(|b| b.is_ascii_digit()) {
        // Absurdly long digit strings saturate rather than fail; the cap
        // applies afterwards either way.
        let seconds = value
            .parse::<i64>()
            .unwrap_or(i64::MAX)
            .min(i64::MAX / 1_000_000);
        return received_at
            .checked_add_signed(Duration::seconds(seconds))
            .or(Some(DateTime::<Utc>::MAX_UTC));
    }
    // httpdate accepts IMF-fixdate, the obsolete RFC 850 form and asctime.
    let date: DateTime<Utc> = httpdate::parse_http_date(value).ok()?.into();
    let wait = (date - server_date.unwrap_or(received_at)).max(Duration::zero());
    Some(
        received_at
            .checked_add_signed(wait)
            .unwrap_or(DateTime::<Utc>::MAX_UTC),
    )
}

/// The receiver's deadline, capped at `max_server_delay` after receipt.
pub fn server_deadline(
    raw: Option<&str>,
    received_at: DateTime<Utc>,
    server_date: Option<DateTime<Utc>>,
    max_server_delay: Duration,
) -> Option<DateTime<Utc>> {
    let deadline = parse_retry_after(raw?, received_at, server_date)?;
    let cap = received_at
        .checked_add_signed(max_server_delay)
        .unwrap_or(DateTime::<Utc>::MAX_UTC);
    Some(deadline.min(cap))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn frozen() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 2).unwrap()
    }

    #[test]
    fn delay_seconds() {
        assert_eq!(
            parse_retry_after("120", frozen(), None),
            Some(frozen() + Duration::seconds(120))
        );
        assert_eq!(parse_retry_after(" 0 ", frozen(), None), Some(frozen()));
    }

    #[test]
    fn each_http_date_form() {
        let at = Utc.with_ymd_and_hms(2026, 8, 13, 9, 2, 2).unwrap();
        assert_eq!(
            parse_retry_after("Thu, 13 Aug 2026 09:02:02 GMT", frozen(), None),
            Some(at)
        );
        assert_eq!(
            parse_retry_after("Thursday, 13-Aug-26 09:02:02 GMT", frozen(), None),
            Some(at)
        );
        assert_eq!(
            parse_retry_after("Thu Aug 13 09:02:02 2026", frozen(), None),
            Some(at)
        );
    }

    #[test]
    fn absent_empty_negative_and_garbage_mean_none() {
        assert_eq!(
            server_deadline(None, frozen(), None, Duration::hours(24)),
            None
        );
        for raw in [
            "",
            "   ",
            "-5",
            "1.5",
            "soon",
            "Thu, 32 Aug 2026 09:02:02 GMT",
            "+3",
        ] {
            assert_eq!(parse_retry_after(raw, frozen(), None), None, "{raw:?}");
        }
    }

    #[test]
    fn a_past_date_means_now() {
        assert_eq!(
            parse_retry_after("Thu, 01 Jan 2026 00:00:00 GMT", frozen(), None),
            Some(frozen())
        );
    }

    #[test]
    fn an_http_date_is_read_against_the_receivers_own_date() {
        // The receiver's clock runs a minute ahead of ours: its Date and
        // Retry-After agree on a two-minute wait, which is what we wait.
        let date = Utc.with_ymd_and_hms(2026, 8, 13, 9, 1, 2).unwrap();
        assert_eq!(
            parse_retry_after("Thu, 13 Aug 2026 09:03:02 GMT", frozen(), Some(date)),
            Some(frozen() + Duration::seconds(120))
        );
        // A date before the receiver's own now means now.
        assert_eq!(
            parse_retry_after("Thu, 13 Aug 2026 09:00:02 GMT", frozen(), Some(date)),
            Some(frozen())
        );
    }

    #[test]
    fn capped_at_max_server_delay() {
        let cap = Duration::hours(24);
        assert_eq!(
            server_deadline(Some("999999999"), frozen(), None, cap),
            Some(frozen() + cap)
        );
        assert_eq!(
            server_deadline(Some("99999999999999999999999"), frozen(), None, cap),
            Some(frozen() + cap)
        );
        assert_eq!(
            server_deadline(Some("Fri, 01 Jan 2100 00:00:00 GMT"), frozen(), None, cap),
            Some(frozen() + cap)
        );
    }
}
