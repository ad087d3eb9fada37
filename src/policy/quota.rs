//! The quota a receiver announces on its responses, read from its
//! rate-limit fields: the IETF `RateLimit-Policy` and `RateLimit` fields
//! (draft-ietf-httpapi-ratelimit-headers, the structured-field form of
//! drafts 08 and later) or the common `X-RateLimit-Limit`,
//! `X-RateLimit-Remaining` and `X-RateLimit-Reset` trio (also read without
//! the `X-`, as drafts up to 06 named them).
//!
//! What is read is how many requests remain and how long until the quota
//! resets, measured from the response's receipt, so the store can add it
//! to its own clock. Every value is clamped to a sane range (a count of at
//! most [`MAX_UNITS`], a reset no further than the retry policy's
//! `max_server_delay`) and each clamp or unreadable field is reported, for
//! the caller to log: a receiver can slow remit down for as long as it may
//! with a Retry-After, never longer, and never make it panic.

use chrono::{DateTime, Duration, Utc};
use sfv::{BareItem, List, ListEntry, Parser};

/// The largest count of requests read from a field; larger counts are
/// clamped to it (no configured rate comes near it).
pub const MAX_UNITS: u64 = 1_000_000_000;

/// The longest field read; a longer one is reported and ignored, so a
/// hostile receiver cannot make remit parse a megabyte per response.
const MAX_FIELD_LEN: usize = 1024;

/// A `X-RateLimit-Reset` at or above this many seconds is a Unix time
/// (2001-09-09 onwards); below it, a number of seconds from now.
const UNIX_TIME_FROM: f64 = 1_000_000_000.0;

/// The raw rate-limit fields of one response, as the transport found them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuotaFields {
    pub ratelimit_policy: Option<String>,
    pub ratelimit: Option<String>,
    /// `X-RateLimit-Limit`, or `RateLimit-Limit`.
    pub limit: Option<String>,
    /// `X-RateLimit-Remaining`, or `RateLimit-Remaining`.
    pub remaining: Option<String>,
    /// `X-RateLimit-Reset`, or `RateLimit-Reset`.
    pub reset: Option<String>,
}

impl QuotaFields {
    /// True when the response announced nothing: the common case, which
    /// costs no parsing and no write.
    pub fn is_empty(&self) -> bool {
        self.ratelimit_policy.is_none()
            && self.ratelimit.is_none()
            && self.limit.is_none()
            && self.remaining.is_none()
            && self.reset.is_none()
    }
}

/// What a receiver announced: `remaining` requests until `resets_in` after
/// the response arrived, out of `limit` when it said, over a `window` when
/// its policy named one (`RateLimit-Policy`'s `w`, when the reset and one
/// window fit in `max_server_delay`): past the reset, a new window of
/// `limit` begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    pub remaining: u64,
    pub resets_in: Duration,
    pub limit: Option<u64>,
    pub window: Option<Duration>,
}

/// What one response's fields gave: the quota to pace by (the most
/// restrictive announced, when several were), and what was clamped or
/// could not be read, one plain sentence each (numbers, never raw field
/// text).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Announced {
    pub quota: Option<Quota>,
    pub problems: Vec<String>,
}

/// Reads the quota the fields announce. A Unix-time reset is measured
/// against the response's own `Date` when it had one (both on the
/// receiver's clock), else against `received_at`, like a Retry-After
/// HTTP-date.
pub fn read_quota(
    fields: &QuotaFields,
    received_at: DateTime<Utc>,
    server_date: Option<DateTime<Utc>>,
    max_server_delay: Duration,
) -> Announced {
    let mut reader = Reader {
        max_delay: max_server_delay.max(Duration::zero()),
        problems: Vec::new(),
    };
    let structured = fields.ratelimit.is_some() || fields.ratelimit_policy.is_some();
    let quota = if structured {
        reader.structured(fields)
    } else {
        reader.legacy(
            fields,
            (server_date.unwrap_or(received_at)).timestamp_millis(),
        )
    };
    Announced {
        quota,
        problems: reader.problems,
    }
}

struct Reader {
    max_delay: Duration,
    problems: Vec<String>,
}

/// One named quota of the structured fields.
struct Named {
    name: String,
    count: Option<f64>,
    seconds: Option<f64>,
}

impl Reader {
    /// `RateLimit: "name";r=R;t=T` (what remains of each quota and when it
    /// resets), matched by name to `RateLimit-Policy: "name";q=Q;w=W` for
    /// the limit, and for the reset when `t` is missing. Without a
    /// `RateLimit`, each policy is read as its whole quota over its window.
    fn structured(&mut self, fields: &QuotaFields) -> Option<Quota> {
        let policies = self.list(
            "RateLimit-Policy",
            fields.ratelimit_policy.as_deref(),
            "q",
            "w",
        );
        let current = self.list("RateLimit", fields.ratelimit.as_deref(), "r", "t");
        let mut candidates = Vec::new();
        if fields.ratelimit.is_some() {
            for item in &current {
                let policy = policies.iter().find(|p| p.name == item.name);
                let limit = policy.and_then(|p| p.count);
                let window = policy.and_then(|p| p.seconds);
                let seconds = item.seconds.or(window);
                if let (Some(remaining), Some(seconds)) = (item.count, seconds) {
                    let read = self.quota("RateLimit", remaining, seconds, limit);
                    candidates.push(self.over(read, window));
                }
            }
        } else {
            for policy in &policies {
                if let (Some(quota), Some(seconds)) = (policy.count, policy.seconds) {
                    let read = self.quota("RateLimit-Policy", quota, seconds, Some(quota));
                    candidates.push(self.over(read, Some(seconds)));
                }
            }
        }
        most_restrictive(candidates)
    }

    /// The `X-RateLimit-*` trio: `Remaining` and `Reset` are both needed
    /// to pace; `Reset` is seconds from now, or a Unix time.
    fn legacy(&mut self, fields: &QuotaFields, server_now_ms: i64) -> Option<Quota> {
        let limit = self.number("X-RateLimit-Limit", fields.limit.as_deref());
        let remaining = self.number("X-RateLimit-Remaining", fields.remaining.as_deref());
        let reset = self.number("X-RateLimit-Reset", fields.reset.as_deref());
        let seconds = reset.map(|reset| {
            if reset >= UNIX_TIME_FROM {
                reset - server_now_ms as f64 / 1000.0
            } else {
                reset
            }
        });
        Some(self.quota("X-RateLimit", remaining?, seconds?, limit))
    }

    /// The items of a structured-field list, each with the two numeric
    /// parameters named; an item whose name is neither a string nor a
    /// token, or a number that is neither an integer nor a decimal, is
    /// left out and reported.
    fn list(&mut self, field: &str, raw: Option<&str>, count: &str, seconds: &str) -> Vec<Named> {
        let Some(raw) = raw else {
            return Vec::new();
        };
        if raw.len() > MAX_FIELD_LEN {
            self.problems.push(format!(
                "{field} is longer than {MAX_FIELD_LEN} bytes; ignored"
            ));
            return Vec::new();
        }
        let list: List = match Parser::new(raw).parse() {
            Ok(list) => list,
            Err(_) => {
                self.problems
                    .push(format!("{field} is not a structured-field list; ignored"));
                return Vec::new();
            }
        };
        let mut named = Vec::new();
        for entry in list {
            let ListEntry::Item(item) = entry else {
                self.problems.push(format!(
                    "{field} holds an inner list; that member is ignored"
                ));
                continue;
            };
            let name = match &item.bare_item {
                BareItem::String(s) => s.as_str().to_owned(),
                BareItem::Token(t) => t.as_str().to_owned(),
                _ => {
                    self.problems.push(format!(
                        "{field} names a quota with neither a string nor a token; ignored"
                    ));
                    continue;
                }
            };
            let mut param = |key: &str| {
                let value = item.params.iter().find(|(k, _)| k.as_str() == key)?.1;
                let number = match value {
                    BareItem::Integer(i) => Some(i64::from(*i) as f64),
                    BareItem::Decimal(d) => Some(f64::from(*d)),
                    _ => None,
                };
                if number.is_none() {
                    self.problems
                        .push(format!("{field} parameter {key} is not a number; ignored"));
                }
                number
            };
            let (count, seconds) = (param(count), param(seconds));
            named.push(Named {
                name,
                count,
                seconds,
            });
        }
        named
    }

    /// A plain decimal number (`12`, `-3`, `1.5`); anything else (an
    /// exponent, `inf`, text) is reported and ignored.
    fn number(&mut self, field: &str, raw: Option<&str>) -> Option<f64> {
        let raw = raw?.trim();
        if raw.len() > MAX_FIELD_LEN {
            self.problems.push(format!(
                "{field} is longer than {MAX_FIELD_LEN} bytes; ignored"
            ));
            return None;
        }
        let digits = raw.strip_prefix('-').unwrap_or(raw);
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let plain = !whole.is_empty()
            && whole.len() <= 20
            && fraction.len() <= 9
            && whole
                .bytes()
                .chain(fraction.bytes())
                .all(|b| b.is_ascii_digit());
        match raw.parse::<f64>() {
            Ok(n) if plain && n.is_finite() => Some(n),
            _ => {
                self.problems
                    .push(format!("{field} is not a decimal number; ignored"));
                None
            }
        }
    }

    /// Clamps one announcement: a negative count to 0 and a huge one to
    /// [`MAX_UNITS`]; a reset in the past to now, one further than
    /// `max_server_delay` to that.
    fn quota(&mut self, field: &str, remaining: f64, seconds: f64, limit: Option<f64>) -> Quota {
        let units = |what: &str, n: f64, problems: &mut Vec<String>| {
            let clamped = n.clamp(0.0, MAX_UNITS as f64);
            if clamped != n {
                problems.push(format!(
                    "{field} {what} {n} is outside 0..={MAX_UNITS}; read as {clamped}"
                ));
            }
            clamped.floor() as u64
        };
        let remaining = units("remaining", remaining, &mut self.problems);
        let limit = limit.map(|l| units("limit", l, &mut self.problems));
        let max_ms = self.max_delay.num_milliseconds();
        let ms = (seconds * 1000.0).ceil();
        let clamped = ms.clamp(0.0, max_ms as f64);
        if clamped != ms {
            self.problems.push(format!(
                "{field} reset {seconds} s is outside 0..={} s; read as {} s",
                max_ms / 1000,
                clamped / 1000.0
            ));
        }
        Quota {
            remaining,
            resets_in: Duration::milliseconds(clamped as i64),
            limit,
            window: None,
        }
    }

    /// The quota with the window its policy named, kept only when it is
    /// positive and the reset and one window after it together last no
    /// longer than `max_server_delay`: the quota renews once, for one
    /// window, and what it holds back must stay within what a Retry-After
    /// may (a longer one is not assumed; the configured rate returns after
    /// the reset instead). Not a clamp, so nothing is reported.
    fn over(&self, quota: Quota, window: Option<f64>) -> Quota {
        let max_ms = self.max_delay.num_milliseconds() as f64;
        let reset_ms = quota.resets_in.num_milliseconds() as f64;
        let window = window
            .map(|seconds| (seconds * 1000.0).ceil())
            .filter(|&ms| ms >= 1.0 && reset_ms + ms <= max_ms)
            .map(|ms| Duration::milliseconds(ms as i64));
        Quota { window, ..quota }
    }
}

/// The quota that allows the slowest pace: the least remaining per second
/// until its reset, and of those with nothing left, the one that resets
/// last.
fn most_restrictive(candidates: Vec<Quota>) -> Option<Quota> {
    let pace = |q: &Quota| {
        let seconds = q.resets_in.num_milliseconds().max(1) as f64 / 1000.0;
        q.remaining as f64 / seconds
    };
    candidates.into_iter().min_by(|a, b| {
        pace(a)
            .total_cmp(&pace(b))
            .then_with(|| b.resets_in.cmp(&a.resets_in))
    })
}

#[cfg(test)]
#[path = "quota_tests.rs"]
mod tests;
