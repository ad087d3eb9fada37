//! What a change to a destination writes, the same in every store: the
//! settings and thresholds after it, its URL, and its header rows (a
//! secret given without its value keeps the row stored under its name).
//!
//! A secret header was given for one receiver: a change of the URL's
//! origin (scheme, host or port) that would carry a sealed value to
//! another is refused, naming the headers, unless the change gives their
//! values again or leaves them out (which drops them). Otherwise a second
//! admin could move the URL to a host of theirs and receive the first's
//! credential with the next webhook.

use crate::domain::{
    header_field, quoted, Destination, DestinationChange, DestinationId, DestinationSettings,
    DisableOverrides, InvalidInput, NewDestination,
};
use crate::payload_crypto::PayloadKey;
use crate::store::contract::{HeaderRecord, StoreError};

/// The destination's columns after a change.
#[derive(Debug, Clone)]
pub(in crate::store) struct Plan {
    pub url: url::Url,
    /// Its settings (headers apart, below).
    pub settings: DestinationSettings,
    pub overrides: DisableOverrides,
    /// Every header row, in order, when the change gives headers; `None`
    /// leaves the rows as they are.
    pub headers: Option<Vec<HeaderRecord>>,
}

/// Applies `change` to `current` (with its header rows as stored), sealing
/// new secret values with `key`.
pub(in crate::store) fn plan(
    current: &Destination,
    stored: &[HeaderRecord],
    change: &DestinationChange,
    key: &PayloadKey,
) -> Result<Plan, StoreError> {
    change.validate()?;
    if let Some(expected) = &change.if_match {
        // Its headers as a read shows them, whatever this read carried.
        let mut shown = current.clone();
        shown.settings.headers = stored.iter().map(HeaderRecord::shown).collect();
        let tag = shown.settings_tag();
        if *expected != tag {
            return Err(StoreError::Stale {
                what: "destination",
                id: current.id.to_string(),
                current: tag,
            });
        }
    }
    let settings = change.settings_after(&current.settings);
    let thresholds = current.health.overrides;
    let overrides = DisableOverrides::new(
        change.disable_after_seconds.apply(thresholds.after_seconds),
        change.disable_after_failures.apply(thresholds.failures),
    )?;
    let destination = current.id.as_str();
    // The sealed values the change keeps as they were stored.
    let kept_secrets: Vec<&str> = match &change.headers {
        None => stored
            .iter()
            .filter(|r| r.key_fingerprint().is_some())
            .map(|r| r.name.as_str())
            .collect(),
        Some(asked) => asked
            .iter()
            .filter(|h| h.value.is_secret() && h.value.known().is_none())
            .filter(|h| {
                stored
                    .iter()
                    .any(|r| r.name == h.name && r.key_fingerprint().is_some())
            })
            .map(|h| h.name.as_str())
            .collect(),
    };
    if let Some(url) = &change.url {
        if url.origin() != current.url.origin() && !kept_secrets.is_empty() {
            return Err(secrets_would_move(&current.url, url, &kept_secrets));
        }
    }
    let headers = match &change.headers {
        None => None,
        Some(asked) => Some(
            asked
                .iter()
                .enumerate()
                .map(
                    |(i, header)| match HeaderRecord::seal(header, key, destination) {
                        Some(record) => Ok(record),
                        // A secret without its value: the one stored, if the
                        // header was a secret before.
                        None => stored
                            .iter()
                            .find(|r| r.name == header.name && r.key_fingerprint().is_some())
                            .cloned()
                            .ok_or_else(|| kept_secret_missing(i, &header.name)),
                    },
                )
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    Ok(Plan {
        url: change.url.clone().unwrap_or_else(|| current.url.clone()),
        settings,
        overrides,
        headers,
    })
}

/// What every deleted destination's `disabled_reason` says.
pub const DELETED_REASON: &str = "deleted";

/// The refusal of a deletion that would leave live tasks behind. Each
/// surface adds how to delete it with its tasks in its own words
/// ([`StoreError::with_remedy`]).
pub(in crate::store) fn live_refusal(id: &DestinationId, live: u64) -> StoreError {
    StoreError::InUse {
        what: "destination",
        id: id.to_string(),
        why: format!("{live} of its tasks have not ended; cancel them first"),
    }
}

/// The refusal of a registration that would bring a deleted destination
/// back in another region: the tasks that ended under it keep its region
/// until retention prunes them.
pub(in crate::store) fn revived_elsewhere(new: &NewDestination, region: &str) -> StoreError {
    StoreError::Conflict {
        what: format!(
            "deleted destination {} (its ended tasks keep region {region} until retention \
             prunes them)",
            new.id
        ),
        differs: "region".into(),
    }
}

/// The destination as its deletion at `now` leaves it: disabled as
/// deleted, without secrets or headers (the audit log's "after").
pub(in crate::store) fn tombstone(
    d: &Destination,
    now: chrono::DateTime<chrono::Utc>,
) -> Destination {
    let mut after = d.clone();
    after.enabled = false;
    after.has_signing_secret = false;
    after.health.disabled_reason = Some(DELETED_REASON.to_owned());
    after.health.disabled_at = Some(now);
    after.settings.headers.clear();
    after
}

/// The refusal of registering a deleted destination again while tasks of
/// its deleted registration are still being cancelled: one could be sent
/// to the new registration before its cancel reached it.
pub(in crate::store) fn revived_while_cancelling(new: &NewDestination, live: u64) -> StoreError {
    StoreError::InUse {
        what: "deleted destination",
        id: new.id.to_string(),
        why: format!(
            "{live} of its tasks have not ended yet (its deletion cancels them: those waiting \
             through its cancel job, one in flight once its attempt ends); register it again \
             once they have"
        ),
    }
}

/// The refusal of a change that would send secret headers sealed for one
/// origin to another.
fn secrets_would_move(from: &url::Url, to: &url::Url, names: &[&str]) -> StoreError {
    let names: Vec<String> = names.iter().map(|n| quoted(n)).collect();
    StoreError::Invalid(InvalidInput::new(
        "url",
        format!(
            "moves the destination from {} to {}, and its secret header{} {} would go there \
             with it; give {} value{} again in headers, or leave {} out to drop {}",
            from.origin().ascii_serialization(),
            to.origin().ascii_serialization(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", "),
            if names.len() == 1 { "its" } else { "their" },
            if names.len() == 1 { "" } else { "s" },
            if names.len() == 1 { "it" } else { "them" },
            if names.len() == 1 { "it" } else { "them" },
        ),
    ))
}

fn kept_secret_missing(index: usize, name: &str) -> StoreError {
    StoreError::Invalid(InvalidInput::new(
        header_field(index, "value"),
        format!(
            "{} has no secret value stored to keep; give its value",
            quoted(name)
        ),
    ))
}
