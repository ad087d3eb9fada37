//! A destination's own settings: its limits, its send timeout, its retry
//! policy, when its reminders count as late, and the headers its requests
//! carry. Each numeric setting is optional: `None` takes the runtime's
//! value (the configuration's entry for the destination, else its
//! default), so a destination registered without settings behaves as it
//! always did.
//!
//! # Adding a setting
//! A numeric setting is one line of [`destination_settings!`]: its name,
//! its type, the least and most accepted, the console's label and what it
//! means. From that line come its field on [`DestinationSettings`] and on
//! `DestinationChange`, its bound check, its place in the `ETag`, what
//! the audit log shows, the export line, the API's change and view, the
//! CLI's flag and `--reset`, the console's row, PostgreSQL's writes of it
//! and each store's reset of a destination registered again. What the
//! line cannot give:
//! 1. Its column: a migration for each store (`migrations/postgres`,
//!    `migrations/sqlite`, NULL for old rows, so they behave as they did),
//!    PostgreSQL's `tables/schema.rs` and `tables/rows.rs` (the row read),
//!    SQLite's `rows.rs` (the row read) and `destination_changes.rs` (its
//!    write), and `store/rules/columns.rs` (what a read gives back).
//! 2. Its value when unset: the configuration (`config/sections.rs`,
//!    `config/validate.rs`) and the console's `runtime_numbers`.
//! 3. Where it takes effect (the runtime or the policy), a conformance case
//!    that round-trips it on all three stores, docs/api.md and
//!    docs/operations.md, and the OpenAPI document regenerated.

use super::custom_header::CustomHeader;

/// Every numeric setting of a destination, once. Hands the list to the
/// macro `$use`, after the tokens given in braces (which `$use` may need
/// to place the settings among other fields), one line per setting:
/// `name: type = least ..= most, "label", "what it means";`. The bounds
/// are literals, so a schema or a help text can show them.
#[macro_export]
macro_rules! destination_settings {
    ($use:ident $({ $($extra:tt)* })*) => {
        $use! {
            [$({ $($extra)* })*]
            rate_per_second: f64 = 0.001 ..= 1000000.0, "Requests per second",
                "Requests per second across the region's processes: 0.001 to 1000000.";
            burst: u32 = 1 ..= 1000000, "Burst",
                "Requests that may go at once after a quiet spell: 1 to 1000000.";
            max_in_flight: u32 = 1 ..= 1000000, "In flight at once (per process)",
                "Requests under way at once in each process: 1 to 1000000.";
            timeout_ms: u32 = 100 ..= 86400000, "Send timeout (ms)",
                "Whole-request timeout in milliseconds: 100 to 86400000, and at most half the \
                 lease (a process uses at most half its lease whatever is stored).";
            max_attempts: u32 = 1 ..= 1000000, "Attempts before failing",
                "Attempts before a task fails with `max_attempts`: 1 to 1000000.";
            retry_horizon_seconds: i64 = 0 ..= 315360000, "Retry horizon of new tasks (s)",
                "The retry horizon of tasks scheduled to it from now on without one of their \
                 own, in seconds: 0 to 315360000.";
            late_after_seconds: i64 = 1 ..= 315360000, "Late after not_before (s)",
                "How long after its `not_before` an undelivered reminder is late (a \
                 `reminder.late` event), in seconds: 1 to 315360000.";
        }
    };
}

macro_rules! settings_struct {
    ([] $($name:ident: $ty:ident = $least:tt ..= $most:tt, $label:literal, $doc:literal;)*) => {
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct DestinationSettings {
            $(#[doc = $doc] pub $name: Option<$ty>,)*
            /// Sent with every request, in this order.
            pub headers: Vec<CustomHeader>,
        }

        /// Each numeric setting's name, as the API, the CLI and the
        /// console name it.
        pub const SETTING_NAMES: &[&str] = &[$(stringify!($name)),*];

        impl DestinationSettings {
            /// Each numeric setting: its name, the console's label for it,
            /// and its value as text (`None`: the runtime's).
            pub fn shown(&self) -> Vec<(&'static str, &'static str, Option<String>)> {
                vec![$((stringify!($name), $label, self.$name.map(|v| v.to_string()))),*]
            }

            /// Each numeric setting by its name, as JSON (`null`: the
            /// runtime's), in the list's order.
            pub fn to_json(&self) -> Vec<(&'static str, serde_json::Value)> {
                vec![$((stringify!($name), serde_json::json!(self.$name))),*]
            }

            /// Each numeric setting by its name (its column's too), as a
            /// store writes it.
            pub fn values(&self) -> Vec<(&'static str, SettingValue)> {
                vec![$((stringify!($name), SettingValue::from(self.$name))),*]
            }

            /// The numeric settings as a version counts them (`Debug` of
            /// each, one per line).
            pub(super) fn tag_lines(&self) -> String {
                let lines: Vec<String> = vec![$(format!("{:?}", self.$name)),*];
                lines.join("\n")
            }
        }
    };
}

destination_settings!(settings_struct);

/// A numeric setting's value as a store writes it: a rate, or a whole
/// number (`None`: the runtime's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SettingValue {
    Rate(Option<f64>),
    Whole(Option<i64>),
}

impl From<Option<f64>> for SettingValue {
    fn from(v: Option<f64>) -> Self {
        SettingValue::Rate(v)
    }
}

impl From<Option<u32>> for SettingValue {
    fn from(v: Option<u32>) -> Self {
        SettingValue::Whole(v.map(i64::from))
    }
}

impl From<Option<i64>> for SettingValue {
    fn from(v: Option<i64>) -> Self {
        SettingValue::Whole(v)
    }
}

/// `name = NULL` for every numeric setting, comma-separated: what gives
/// each back to the runtime in an `UPDATE` of a row of `destinations`.
pub fn settings_reset_sql() -> String {
    let resets: Vec<String> = SETTING_NAMES
        .iter()
        .map(|n| format!("{n} = NULL"))
        .collect();
    resets.join(", ")
}

impl DestinationSettings {
    /// Whether nothing is set: the runtime's values apply throughout.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_is_shown_by_its_name_in_order() {
        let s = DestinationSettings {
            burst: Some(10),
            late_after_seconds: Some(60),
            ..DestinationSettings::default()
        };
        let shown = s.shown();
        let names: Vec<&str> = shown.iter().map(|(name, _, _)| *name).collect();
        assert_eq!(names, SETTING_NAMES);
        assert_eq!(shown[1].2.as_deref(), Some("10"));
        assert_eq!(shown[0].2, None);
        assert_eq!(
            s.to_json()[6],
            ("late_after_seconds", serde_json::json!(60))
        );
        assert_eq!(s.tag_lines().lines().count(), SETTING_NAMES.len());
    }
}
