//! Counts and instants as a person reads them, and a script too: "1
//! request", "2 requests", "3 retries", "2026-12-05T08:05:56Z".

use chrono::{DateTime, SecondsFormat, Utc};

/// An instant as every line of the command line's output writes it: RFC
/// 3339 in UTC, to the second, with `Z` (one form a script can parse, and
/// the form the flags that take an instant show in their examples).
pub fn instant(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// `n` and the noun, singular for one and plural otherwise.
pub fn counted(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        return format!("1 {noun}");
    }
    format!("{n} {}", plural(noun))
}

/// The regular English plural, which is all remit's nouns need.
fn plural(noun: &str) -> String {
    let consonant_y = noun.len() > 1
        && noun.ends_with('y')
        && !noun[..noun.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if noun.ends_with(['s', 'x']) || noun.ends_with("ch") || noun.ends_with("sh") {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::{counted, instant};
    use chrono::TimeZone as _;

    #[test]
    fn an_instant_is_rfc_3339_in_utc_with_z() {
        let at = chrono::Utc
            .with_ymd_and_hms(2026, 12, 5, 8, 5, 56)
            .unwrap()
            .checked_add_signed(chrono::Duration::microseconds(282_193))
            .unwrap();
        assert_eq!(instant(at), "2026-12-05T08:05:56Z");
    }

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1u64, "request"), "1 request");
        assert_eq!(counted(0u64, "request"), "0 requests");
        assert_eq!(counted(2u64, "retry"), "2 retries");
        assert_eq!(counted(2u64, "delivery"), "2 deliveries");
        assert_eq!(counted(3u64, "batch"), "3 batches");
        assert_eq!(counted(4u64, "day"), "4 days");
        assert_eq!(counted(1u64, "task"), "1 task");
    }
}
