//! A W3C Trace Context `traceparent`: which trace, and which span in it,
//! scheduled a task. The task keeps it so that each of its attempts joins
//! that trace, however long after the request it runs.
//!
//! Only version `00` is kept (the one W3C defines):
//! `00-<trace id: 32 hex>-<parent id: 16 hex>-<flags: 2 hex>`, lowercase,
//! neither id all zeros. A header of a later version is read by its
//! version-00 fields, as W3C asks, and kept as version 00.

use super::ids::InvalidInput;

/// A valid version-00 `traceparent`, 55 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TraceParent(String);

/// The length of a version-00 `traceparent`.
const LEN: usize = 55;

impl TraceParent {
    /// Reads a `traceparent` header as W3C Trace Context reads it. A caller
    /// is told which rule it broke; the API ignores an invalid one (a new
    /// trace starts), as the specification says.
    pub fn parse(text: &str) -> Result<Self, InvalidInput> {
        let invalid = |why: &str| {
            InvalidInput::new(
                "traceparent",
                format!("{why}; accepted: 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>, lowercase, ids not all zeros"),
            )
        };
        let bytes = text.as_bytes();
        if bytes.len() < LEN {
            return Err(invalid("too short"));
        }
        // Checked first, so the slices below cut between characters.
        if !bytes[..LEN].is_ascii() {
            return Err(invalid("the ids and flags must be lowercase hex"));
        }
        let version = &text[..2];
        if !is_lower_hex(version) || version == "ff" {
            return Err(invalid(
                "the version must be two lowercase hex digits, not ff",
            ));
        }
        // Version 00 is exactly 55 characters; a later version may carry
        // more fields, after a dash.
        if (version == "00" && bytes.len() != LEN) || (bytes.len() > LEN && bytes[LEN] != b'-') {
            return Err(invalid(
                "version 00 is exactly 55 characters; a later version's own fields follow a dash",
            ));
        }
        if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return Err(invalid("the fields must be separated by dashes"));
        }
        let (trace_id, parent_id, flags) = (&text[3..35], &text[36..52], &text[53..55]);
        if !is_lower_hex(trace_id) || !is_lower_hex(parent_id) || !is_lower_hex(flags) {
            return Err(invalid("the ids and flags must be lowercase hex"));
        }
        if is_zero(trace_id) || is_zero(parent_id) {
            return Err(invalid("the trace id and parent id must not be all zeros"));
        }
        Ok(Self(format!("00-{trace_id}-{parent_id}-{flags}")))
    }

    /// The `traceparent` of span `parent_id` in trace `trace_id`; `None`
    /// when either id is all zeros (no valid span has such an id).
    pub fn new(trace_id: u128, parent_id: u64, flags: u8) -> Option<Self> {
        (trace_id != 0 && parent_id != 0)
            .then(|| Self(format!("00-{trace_id:032x}-{parent_id:016x}-{flags:02x}")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// 32 lowercase hex digits.
    pub fn trace_id(&self) -> &str {
        &self.0[3..35]
    }

    /// 16 lowercase hex digits: the span that scheduled the task.
    pub fn parent_id(&self) -> &str {
        &self.0[36..52]
    }

    pub fn trace_id_value(&self) -> u128 {
        u128::from_str_radix(self.trace_id(), 16).unwrap_or_default()
    }

    pub fn parent_id_value(&self) -> u64 {
        u64::from_str_radix(self.parent_id(), 16).unwrap_or_default()
    }

    pub fn flags(&self) -> u8 {
        u8::from_str_radix(&self.0[53..55], 16).unwrap_or_default()
    }

    /// Whether the caller recorded the trace (the `sampled` flag).
    pub fn sampled(&self) -> bool {
        self.flags() & 1 == 1
    }
}

impl std::fmt::Display for TraceParent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_lower_hex(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn is_zero(text: &str) -> bool {
    text.bytes().all(|b| b == b'0')
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_version_00_header_is_kept_as_it_came() {
        let parent = TraceParent::parse(VALID).unwrap();
        assert_eq!(parent.as_str(), VALID);
        assert_eq!(parent.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(parent.parent_id(), "00f067aa0ba902b7");
        assert_eq!(parent.trace_id_value(), 0x4bf92f3577b34da6a3ce929d0e0e4736);
        assert_eq!(parent.parent_id_value(), 0x00f067aa0ba902b7);
        assert!(parent.sampled());
        let unsampled = TraceParent::parse(&VALID.replace("-01", "-00")).unwrap();
        assert!(!unsampled.sampled());
    }

    #[test]
    fn a_later_version_is_read_by_its_version_00_fields() {
        let later = format!("{}-what-comes-next", VALID.replacen("00", "cc", 1));
        assert_eq!(TraceParent::parse(&later).unwrap().as_str(), VALID);
        let later_exact = VALID.replacen("00", "01", 1);
        assert_eq!(TraceParent::parse(&later_exact).unwrap().as_str(), VALID);
    }

    #[test]
    fn every_broken_rule_is_refused_naming_the_field() {
        let zero_trace = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
        let zero_parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01";
        for (bad, why) in [
            ("", "too short"),
            (&VALID[..54], "too short"),
            (&format!("{VALID}-extra"), "exactly 55"),
            (&format!("{VALID}0"), "exactly 55"),
            (&VALID.replacen("00", "ff", 1), "not ff"),
            (&VALID.replacen("00", "0G", 1), "not ff"),
            (&VALID.to_uppercase(), "lowercase hex"),
            (&VALID.replace('-', "_"), "dashes"),
            (&VALID.replace("a6a3", "a6z3"), "lowercase hex"),
            (zero_trace, "all zeros"),
            (zero_parent, "all zeros"),
            (&format!("cc{}x", &VALID[2..]), "exactly 55"),
            (&format!("€{}", &VALID[3..]), "lowercase hex"),
        ] {
            let refused = TraceParent::parse(bad).unwrap_err();
            assert_eq!(refused.field, "traceparent", "{bad}");
            assert!(refused.reason.contains(why), "{bad}: {}", refused.reason);
        }
    }

    #[test]
    fn one_made_from_ids_reads_back_and_zero_ids_make_none() {
        let made = TraceParent::new(0x4bf92f3577b34da6a3ce929d0e0e4736, 0xf067aa0ba902b7, 1);
        assert_eq!(made.unwrap().as_str(), VALID);
        assert_eq!(TraceParent::new(0, 1, 1), None);
        assert_eq!(TraceParent::new(1, 0, 1), None);
        let small = TraceParent::new(1, 2, 0).unwrap();
        assert_eq!(TraceParent::parse(small.as_str()).unwrap(), small);
    }
}
