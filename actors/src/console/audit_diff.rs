//! An audit entry's before and after, as the audit page shows them on one
//! line: only what the act changed (`rate_per_second: 5 → 10`), what a
//! creation set (its fields with a value), nothing for a deletion. Values
//! are their compact JSON, cut short past a few dozen characters; the
//! whole change, as text, is the cell's title.

use maud::{html, Markup};
use serde_json::{Map, Value};

/// The longest value shown whole.
const SHOWN: usize = 48;

/// One field the act changed: its value before and after (`None`: no
/// value, or JSON null).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub field: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// What changed from `before` to `after`, field by field in name order. A
/// value that is not an object is one change named `value`.
pub fn changes(before: Option<&Value>, after: Option<&Value>) -> Vec<Change> {
    let empty = Map::new();
    let (old, new) = match (before, after) {
        (Some(Value::Object(old)), Some(Value::Object(new))) => (old, new),
        (None, Some(Value::Object(new))) => (&empty, new),
        (Some(Value::Object(_)), None) | (None, None) => return Vec::new(),
        (old, new) => {
            return differ("value", old, new).into_iter().collect();
        }
    };
    let mut fields: Vec<&String> = old.keys().chain(new.keys()).collect();
    fields.sort();
    fields.dedup();
    fields
        .into_iter()
        .filter_map(|field| differ(field, old.get(field), new.get(field)))
        .collect()
}

fn differ(field: &str, old: Option<&Value>, new: Option<&Value>) -> Option<Change> {
    let (old, new) = (shown(old), shown(new));
    (old != new).then(|| Change {
        field: field.to_owned(),
        before: old,
        after: new,
    })
}

/// A value as JSON; none for a missing one, null, or an empty list or
/// object (a field a creation left unset).
fn shown(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Null => None,
        Value::Array(a) if a.is_empty() => None,
        Value::Object(o) if o.is_empty() => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// A value cut to [`SHOWN`] characters.
fn short(value: &str) -> String {
    if value.chars().count() <= SHOWN {
        return value.to_owned();
    }
    let cut: String = value.chars().take(SHOWN - 1).collect();
    format!("{cut}…")
}

/// The changes as plain text, whole, for the cell's tooltip.
pub fn text(changes: &[Change], created: bool, deleted: bool) -> String {
    if deleted {
        return "deleted".to_owned();
    }
    let dash = "—";
    changes
        .iter()
        .map(|c| match created {
            true => format!("{}: {}", c.field, c.after.as_deref().unwrap_or(dash)),
            false => format!(
                "{}: {} → {}",
                c.field,
                c.before.as_deref().unwrap_or(dash),
                c.after.as_deref().unwrap_or(dash)
            ),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The changes as one line of markup: `field: before → after`, a created
/// field as `field: value`, a cleared one as `field: before → —`.
pub fn line(changes: &[Change], created: bool, deleted: bool) -> Markup {
    if deleted {
        return html! { span.muted { "deleted" } };
    }
    if changes.is_empty() {
        return html! { span.muted { "no setting changed" } };
    }
    let dash = || "—".to_owned();
    html! {
        @for (n, c) in changes.iter().enumerate() {
            @if n > 0 { "; " }
            span.change data-field=(c.field) {
                code { (c.field) } ": "
                @if created {
                    span title=(c.after.clone().unwrap_or_else(dash)) {
                        (short(c.after.as_deref().unwrap_or("—")))
                    }
                } @else {
                    span title=(c.before.clone().unwrap_or_else(dash)) {
                        (short(c.before.as_deref().unwrap_or("—")))
                    }
                    " → "
                    span title=(c.after.clone().unwrap_or_else(dash)) {
                        (short(c.after.as_deref().unwrap_or("—")))
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn change(field: &str, before: Option<&str>, after: Option<&str>) -> Change {
        Change {
            field: field.into(),
            before: before.map(str::to_owned),
            after: after.map(str::to_owned),
        }
    }

    #[test]
    fn only_what_differs_in_field_order() {
        let before =
            json!({"rate_per_second": 5, "url": "https://a", "enabled": true, "headers": []});
        let after = json!({"rate_per_second": 10, "url": "https://a", "enabled": false,
                           "headers": [{"name": "X-Env"}]});
        assert_eq!(
            changes(Some(&before), Some(&after)),
            vec![
                change("enabled", Some("true"), Some("false")),
                change("headers", None, Some(r#"[{"name":"X-Env"}]"#)),
                change("rate_per_second", Some("5"), Some("10")),
            ]
        );
    }

    #[test]
    fn a_creation_lists_what_it_set_and_a_deletion_nothing() {
        let made = json!({"url": "https://a", "burst": null, "headers": [], "region": "eu"});
        assert_eq!(
            changes(None, Some(&made)),
            vec![
                change("region", None, Some("eu")),
                change("url", None, Some("https://a")),
            ]
        );
        assert!(changes(Some(&made), None).is_empty());
        assert!(changes(None, None).is_empty());
        assert_eq!(
            changes(None, Some(&json!(3))),
            vec![change("value", None, Some("3"))]
        );
    }

    #[test]
    fn a_long_value_is_cut_and_kept_whole_in_its_title() {
        let long = "x".repeat(100);
        let markup = line(&[change("url", None, Some(&long))], true, false).into_string();
        assert!(markup.contains(&format!("title=\"{long}\"")), "{markup}");
        assert!(
            markup.contains(&format!("{}…", "x".repeat(SHOWN - 1))),
            "{markup}"
        );
    }
}
