//! An operational event about a destination, kept in an outbox until a
//! region's runtime has turned it into a webhook for the events receiver.

use chrono::{DateTime, Utc};

use super::{Destination, DestinationId, Region};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Disabled,
    Enabled,
}

impl EventKind {
    /// The event's `type`, as stored and as sent.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Disabled => "destination.disabled",
            EventKind::Enabled => "destination.enabled",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "destination.disabled" => Some(EventKind::Disabled),
            "destination.enabled" => Some(EventKind::Enabled),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DestinationEvent {
    /// Stable: the events webhook's idempotency key derives from it.
    pub id: uuid::Uuid,
    pub kind: EventKind,
    pub destination: DestinationId,
    pub region: Region,
    /// Why it was disabled; `None` for an enable.
    pub reason: Option<String>,
    pub at: DateTime<Utc>,
    /// The last failed attempt's status or transport error kind.
    pub last_error: Option<String>,
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
                EventKind::Enabled => None,
            },
            at,
            last_error: d.health.last_error.clone(),
        }
    }
}
