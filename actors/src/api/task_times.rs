//! A task's times as a request writes them: its deadline (`not_before`,
//! RFC 3339 within the years remit can write back) and its retry horizon
//! (whole seconds, at most ten years).

use chrono::{DateTime, Utc};
use remit::domain::InvalidInput;
use serde::Deserialize;

/// Longest retry horizon a task may ask for: ten years, as
/// `retry.horizon_hours` allows.
pub const MAX_HORIZON_SECONDS: u64 = 10 * 365 * 24 * 3600;

/// Earliest `not_before`: any earlier time, moved to UTC, may fall before
/// year 1 and could not be written back as RFC 3339.
fn earliest_not_before() -> DateTime<Utc> {
    DateTime::from_timestamp(-62_135_596_800, 0).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// Latest `not_before` (9989-12-31T23:59:59.999999999Z): with the longest
/// horizon added, every time remit returns stays within year 9999.
fn latest_not_before() -> DateTime<Utc> {
    DateTime::from_timestamp(253_086_767_999, 999_999_999).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// A task's deadline as a request writes it: RFC 3339 with an offset,
/// within the years remit can write back.
pub(super) fn parse_not_before(text: &str) -> Result<DateTime<Utc>, InvalidInput> {
    let not_before = DateTime::parse_from_rfc3339(text)
        .map_err(|e| {
            InvalidInput::new(
                "not_before",
                format!("must be RFC 3339 with an offset, e.g. 2026-08-13T09:00:00Z ({e})"),
            )
        })?
        .with_timezone(&Utc);
    if !(earliest_not_before()..=latest_not_before()).contains(&not_before) {
        return Err(InvalidInput::new(
            "not_before",
            "must be from 0001-01-01T00:00:00Z to 9989-12-31T23:59:59Z",
        ));
    }
    Ok(not_before)
}

/// A count of seconds: an integer, or a number with no fraction.
#[derive(Debug, Clone, Copy)]
pub struct WholeSeconds(pub(super) u64);

impl<'de> Deserialize<'de> for WholeSeconds {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = WholeSeconds;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a whole number of seconds, at least 0")
            }

            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<WholeSeconds, E> {
                Ok(WholeSeconds(v))
            }

            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<WholeSeconds, E> {
                u64::try_from(v)
                    .map(WholeSeconds)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }

            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<WholeSeconds, E> {
                // Any float past u64's range is refused here; one within it
                // but past the maximum is refused by `validate`, with the rest.
                if v.fract() == 0.0 && (0.0..1.8e19).contains(&v) {
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    Ok(WholeSeconds(v as u64))
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Float(v), &self))
                }
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}
