//! An operational event about a destination, kept in an outbox until a
//! region's runtime has turned it into a webhook for the events receiver.
//!
//! Two kinds are written by the change they report, in its transaction (a
//! destination disabled or enabled). The others are written by the
//! region's alert check (`store::Alerts`): a destination's failure streak
//! crossing a level of its disable threshold, and its recovery; and, per
//! destination and coalesced, tasks that ended failed, reminders late
//! against their deadline, and reminders whose retry horizon is about to
//! run out.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::destination::Destination;
use super::ids::DestinationId;
use super::ids::Region;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    Disabled,
    Enabled,
    /// A destination's failure streak reached a level of its threshold.
    Failing,
    /// A streak announced as failing has ended.
    Recovered,
    /// Tasks that ended `failed` (coalesced).
    TaskFailed,
    /// Live tasks not delivered within `late_after` of their `not_before`
    /// (coalesced).
    ReminderLate,
    /// Live tasks whose retry horizon ends soon (coalesced).
    HorizonEnding,
}

impl EventKind {
    /// Every kind, as the outbox's CHECK lists them.
    pub const ALL: [EventKind; 7] = [
        EventKind::Disabled,
        EventKind::Enabled,
        EventKind::Failing,
        EventKind::Recovered,
        EventKind::TaskFailed,
        EventKind::ReminderLate,
        EventKind::HorizonEnding,
    ];

    /// The kinds that report tasks, and are coalesced per destination.
    pub const COALESCED: [EventKind; 3] = [
        EventKind::TaskFailed,
        EventKind::ReminderLate,
        EventKind::HorizonEnding,
    ];

    /// The event's `type`, as stored and as sent.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Disabled => "destination.disabled",
            EventKind::Enabled => "destination.enabled",
            EventKind::Failing => "destination.failing",
            EventKind::Recovered => "destination.recovered",
            EventKind::TaskFailed => "task.failed",
            EventKind::ReminderLate => "reminder.late",
            EventKind::HorizonEnding => "reminder.horizon_ending",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DestinationEvent {
    /// Stable: the events webhook's idempotency key derives from it.
    pub id: uuid::Uuid,
    pub kind: EventKind,
    pub destination: DestinationId,
    pub region: Region,
    /// Why it was disabled; `None` for every other kind.
    pub reason: Option<String>,
    pub at: DateTime<Utc>,
    /// The last failed attempt's status or transport error kind.
    pub last_error: Option<String>,
    /// The body's `data` object, as JSON text, for the kinds the alert
    /// check writes; `None` for a disable or an enable, whose `data` the
    /// relay makes from the fields above.
    pub data: Option<String>,
}

impl DestinationEvent {
    /// The event a change of `d` at `at` makes.
    pub fn of(kind: EventKind, d: &Destination, at: DateTime<Utc>) -> Self {
        Self {
            id: uuid::Uuid::new_v4(),
            kind,
            destination: d.id.clone(),
            region: d.region,
            reason: match kind {
                EventKind::Disabled => d.health.disabled_reason.clone(),
                _ => None,
            },
            at,
            last_error: d.health.last_error.clone(),
            data: None,
        }
    }

    /// An event the alert check writes: its id derives from `key` (what
    /// makes it the one event it is: its kind, destination and the streak,
    /// level or instant it reports), so a check that is rolled back and
    /// run again writes the same id, and the events webhook keeps one
    /// `webhook-id`.
    pub fn alert(
        kind: EventKind,
        destination: &DestinationId,
        region: Region,
        at: DateTime<Utc>,
        key: &str,
        data: &serde_json::Value,
    ) -> Self {
        Self {
            id: stable_id(&[kind.as_str(), destination.as_str(), key]),
            kind,
            destination: destination.clone(),
            region,
            reason: None,
            at,
            last_error: None,
            data: Some(data.to_string()),
        }
    }
}

/// A UUID (version 8, RFC 9562's custom layout) from the SHA-256 of the
/// parts, each ended by a zero byte so that no two lists of parts meet.
fn stable_id(parts: &[&str]) -> uuid::Uuid {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    let digest = hash.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_type() {
        for kind in EventKind::ALL {
            assert_eq!(EventKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(EventKind::parse("destination.exploded"), None);
    }

    #[test]
    fn an_alert_id_is_its_kind_destination_and_key() {
        let d = DestinationId::new("crm").unwrap();
        let at = DateTime::<Utc>::UNIX_EPOCH;
        let data = serde_json::json!({});
        let id = |kind, d: &DestinationId, key| {
            DestinationEvent::alert(kind, d, Region::US, at, key, &data).id
        };
        let first = id(EventKind::TaskFailed, &d, "k");
        assert_eq!(first, id(EventKind::TaskFailed, &d, "k"));
        assert_eq!(first.get_version_num(), 8);
        assert_ne!(first, id(EventKind::ReminderLate, &d, "k"));
        assert_ne!(first, id(EventKind::TaskFailed, &d, "k2"));
        let other = DestinationId::new("crm2").unwrap();
        assert_ne!(first, id(EventKind::TaskFailed, &other, "k"));
    }
}
