//! The events the alert check writes, what waits for a window and the
//! streak announced of each destination, as every store keeps them:
//! written once for the rule in `alerts`.

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Map, Value};

use crate::domain::{Destination, DestinationEvent, DestinationId, EventKind};
use crate::policy::{self, DisableRule, Streak};
use crate::store::contract::{AlertCheck, StoreError};

use super::columns::corrupt;
use super::health::rule_for;

/// What a store keeps of one destination between checks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(in crate::store) struct DestinationAlerts {
    /// The streak announced as failing (when its first failure ended) and
    /// the highest level announced for it.
    pub failing: Option<(DateTime<Utc>, u8)>,
}

/// What waits for a window to pass.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::store) struct Held {
    pub count: u64,
    /// When the first of them was found.
    pub since: DateTime<Utc>,
    pub sample: Vec<Value>,
    /// Failures only: how many of each reason.
    pub reasons: BTreeMap<String, u64>,
}

impl Held {
    /// As the stores keep it: JSON text.
    pub(in crate::store) fn to_text(&self) -> String {
        json!({
            "count": self.count,
            "since": instant(self.since),
            "sample": self.sample,
            "reasons": self.reasons,
        })
        .to_string()
    }

    pub(in crate::store) fn from_text(text: &str) -> Result<Self, StoreError> {
        let bad = |what: &str| corrupt("alert_windows.held", what);
        let v: Value = serde_json::from_str(text).map_err(|e| bad(&e.to_string()))?;
        let since = v["since"]
            .as_str()
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .ok_or_else(|| bad("since"))?
            .with_timezone(&Utc);
        let reasons = match &v["reasons"] {
            Value::Object(m) => m
                .iter()
                .map(|(k, n)| {
                    n.as_u64()
                        .map(|n| (k.clone(), n))
                        .ok_or_else(|| bad("reasons"))
                })
                .collect::<Result<_, _>>()?,
            _ => return Err(bad("reasons")),
        };
        Ok(Self {
            count: v["count"].as_u64().ok_or_else(|| bad("count"))?,
            since,
            sample: v["sample"]
                .as_array()
                .cloned()
                .ok_or_else(|| bad("sample"))?,
            reasons,
        })
    }
}

/// `destination.failing` when `d`'s streak reached a level not yet
/// announced for it, `destination.recovered` when the streak announced
/// has ended. A disabled destination is not announced as failing (its
/// `destination.disabled` says more), but its recovery is.
pub(super) fn streak_events(
    check: &AlertCheck,
    now: DateTime<Utc>,
    default_rule: DisableRule,
    d: &Destination,
    alerts: &mut DestinationAlerts,
    events: &mut Vec<DestinationEvent>,
) {
    let h = &d.health;
    let streak = h.failure_streak_since.map(|since| Streak {
        since,
        count: h.failure_streak,
    });
    if let Some((since, percent)) = alerts.failing {
        if streak.is_none_or(|s| s.since != since) {
            let data = json!({
                "destination_id": d.id.as_str(),
                "region": d.region.as_str(),
                "failing_since": instant(since),
                "percent": percent,
            });
            events.push(DestinationEvent::alert(
                EventKind::Recovered,
                &d.id,
                d.region,
                now,
                &micros(since),
                &data,
            ));
            alerts.failing = None;
        }
    }
    let Some(streak) = streak.filter(|_| d.enabled) else {
        return;
    };
    let rule = rule_for(h, default_rule);
    let percent = policy::failing_percent(streak, now, rule);
    let Some(level) = policy::level_reached(percent, &check.failing_levels) else {
        return;
    };
    if alerts
        .failing
        .is_some_and(|(_, announced)| announced >= level)
    {
        return;
    }
    let data = json!({
        "destination_id": d.id.as_str(),
        "region": d.region.as_str(),
        "percent": level,
        "failure_streak": streak.count,
        "failing_since": instant(streak.since),
        "disable_after_failures": rule.failures,
        "disable_after_seconds": rule.after.num_seconds(),
        "last_error": h.last_error,
    });
    events.push(DestinationEvent::alert(
        EventKind::Failing,
        &d.id,
        d.region,
        now,
        &format!("{}/{level}", micros(streak.since)),
        &data,
    ));
    alerts.failing = Some((streak.since, level));
}

/// The event that sends what was held.
pub(super) fn coalesced(
    check: &AlertCheck,
    kind: EventKind,
    d: &DestinationId,
    now: DateTime<Utc>,
    held: &Held,
) -> DestinationEvent {
    let mut data = Map::new();
    data.insert("destination_id".into(), json!(d.as_str()));
    data.insert("region".into(), json!(check.region.as_str()));
    data.insert("count".into(), json!(held.count));
    data.insert("since".into(), json!(instant(held.since)));
    data.insert("sample".into(), json!(held.sample));
    match kind {
        EventKind::TaskFailed => {
            data.insert("reasons".into(), json!(held.reasons));
        }
        EventKind::ReminderLate => {}
        EventKind::HorizonEnding => {
            data.insert(
                "horizon_warning_seconds".into(),
                json!(check.horizon_warning.num_seconds()),
            );
        }
        _ => {}
    }
    data.insert("window_seconds".into(), json!(check.window.num_seconds()));
    DestinationEvent::alert(
        kind,
        d,
        check.region,
        now,
        &micros(now),
        &Value::Object(data),
    )
}

/// An instant as every event writes it: RFC 3339 in UTC, with `Z`.
pub(in crate::store) fn instant(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

fn micros(at: DateTime<Utc>) -> String {
    at.timestamp_micros().to_string()
}
