//! The event relay: turns the region's operational events (a destination
//! disabled or enabled, written to an outbox in the transaction that made
//! the change; the rest written by the alert check, `alerter`) into
//! ordinary webhooks for the events receiver
//! (`events.url`), then deletes them from the outbox. The webhooks go out
//! through the same durable path as any other (sealed, retried, signed
//! with `events.secret`), so an outage of the events receiver, or a crash
//! at any point, loses nothing: each event's task has the event's id for
//! its key, so turning the same event again is a repeat.
//!
//! The events receiver is a destination of remit's own, one per region,
//! registered at the first step under an id derived from the region, the
//! URL and the secret, and never disabled by a failure streak (its
//! threshold is out of reach).

use remit::store::{Alerts, Database, Destinations, Schedule, StoreError};
use std::time::Duration;

use actix::prelude::*;
use remit::domain::{
    DestinationEvent, DestinationId, DisableOverrides, NewDestination, NewTask, Payload, Region,
    ReminderId, TenantId,
};
use serde_json::json;
use slog::{info, warn};

use super::super::shared::guard::{self, Guarded};
use super::super::shared::Shared;
use crate::events_destination::{events_destination_id, EVENTS_TENANT};

/// Most events turned in one step.
const BATCH: u32 = 100;

pub struct EventRelay {
    shared: Shared,
    /// The events destination, once registered.
    registered: Option<DestinationId>,
}

impl std::fmt::Debug for EventRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRelay").finish_non_exhaustive()
    }
}

impl EventRelay {
    pub fn new(shared: Shared) -> Self {
        Self {
            shared,
            registered: None,
        }
    }

    fn step(&mut self, ctx: &mut Context<Self>) {
        let store = self.shared.store.clone();
        let region = self.shared.region;
        let events = self.shared.config.events.clone();
        let horizon = self.shared.policy.horizon;
        let registered = self.registered.clone();
        let work = async move {
            let target = match (&events.url, registered) {
                (None, _) => None,
                (Some(_), Some(id)) => Some(id),
                (Some(url), None) => {
                    Some(register(&store, region, url, events.secret.clone()).await?)
                }
            };
            let turned = turn(&store, region, target.as_ref(), horizon).await?;
            Ok::<_, StoreError>((target, turned))
        };
        guard::caught(work)
            .into_actor(self)
            .map(|result, this, ctx| match result {
                Ok(Ok((target, turned))) => {
                    this.registered = target;
                    if turned > 0 {
                        info!(this.shared.log, "operational events scheduled";
                              "events" => turned,
                              "events_destination" => this.registered.as_ref().map(|d| d.to_string()));
                    }
                }
                Ok(Err(e)) => warn!(this.shared.log, "could not turn operational events into webhooks";
                                "error" => %remit::error_chain(&e)),
                Err(panic) => {
                    warn!(this.shared.log, "the event relay panicked; restarting it"; "panic" => %panic);
                    ctx.stop();
                }
            })
            .wait(ctx);
    }
}

async fn register(
    store: &Database,
    region: Region,
    url: &str,
    secret: Option<String>,
) -> Result<DestinationId, StoreError> {
    let id = events_destination_id(region, url, secret.as_deref())?;
    let never = DisableOverrides::new(None, Some(i32::MAX as u32))?;
    let new = NewDestination::new(id.clone(), region, url, secret)?.with_overrides(never);
    store.add_destination(new).await?;
    Ok(id)
}

/// Schedules a webhook for each of the region's waiting events (or, with
/// no events receiver, only drops them), then forgets those scheduled.
async fn turn(
    store: &Database,
    region: Region,
    target: Option<&DestinationId>,
    horizon: chrono::Duration,
) -> Result<usize, StoreError> {
    let events = store.destination_events(region, BATCH).await?;
    if events.is_empty() {
        return Ok(0);
    }
    let Some(target) = target else {
        let ids: Vec<_> = events.iter().map(|e| e.id).collect();
        store.forget_destination_events(&ids).await?;
        return Ok(0);
    };
    let tasks = events
        .iter()
        .map(|e| webhook(e, target, horizon))
        .collect::<Result<Vec<_>, _>>()?;
    let answers = store.schedule_many(tasks).await?;
    let mut done = Vec::with_capacity(events.len());
    let mut failure = None;
    for (event, answer) in events.iter().zip(answers) {
        match answer {
            Ok(_) => done.push(event.id),
            // The event's webhook exists already, scheduled for an events
            // receiver configured before this one: it is on its way.
            Err(StoreError::Conflict { .. }) => done.push(event.id),
            Err(e) => failure = Some(e),
        }
    }
    store.forget_destination_events(&done).await?;
    match failure {
        Some(e) => Err(e),
        None => Ok(done.len()),
    }
}

/// The webhook of one event: its body is the Standard Webhooks shape
/// (`type`, `timestamp`, `data`), and its key the event's id. Every field
/// comes from the event, the time it is due included, so turning the same
/// event again (after a crash between scheduling it and forgetting it, or
/// from a second process of the region) is a repeat, not a conflict.
fn webhook(
    event: &DestinationEvent,
    target: &DestinationId,
    horizon: chrono::Duration,
) -> Result<NewTask, StoreError> {
    let data = match &event.data {
        // Written by the alert check, whole.
        Some(text) => {
            serde_json::from_str::<serde_json::Value>(text).map_err(|e| StoreError::Corrupt {
                column: "destination_events.data",
                reason: e.to_string(),
            })?
        }
        None => json!({
            "destination_id": event.destination.as_str(),
            "region": event.region.as_str(),
            "reason": event.reason,
            "at": event.at,
            "last_error": event.last_error,
        }),
    };
    let body = json!({
        "type": event.kind.as_str(),
        "timestamp": event.at,
        "data": data,
    });
    Ok(NewTask {
        traceparent: None,
        tenant_id: TenantId::new(EVENTS_TENANT)?,
        reminder_id: ReminderId::new(&format!("{}-{}", event.kind.as_str(), event.id))?,
        destination_id: target.clone(),
        region: event.region,
        not_before: event.at,
        retry_horizon: horizon,
        payload: Payload::json(body.to_string()),
        ordering_key: None,
    })
}

impl Actor for EventRelay {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let every = Duration::from_millis(self.shared.config.events.poll_ms.max(10));
        self.step(ctx);
        ctx.run_interval(every, |this, ctx| {
            guard::step(this, ctx, |this, ctx| this.step(ctx));
        });
    }
}

impl Guarded for EventRelay {
    fn name(&self) -> String {
        "event_relay".to_owned()
    }

    fn log(&self) -> &slog::Logger {
        &self.shared.log
    }
}

impl Supervised for EventRelay {
    fn restarting(&mut self, _ctx: &mut Context<Self>) {
        self.shared.stats.restarted("event_relay");
        self.shared.restarts.restarted("event_relay");
        warn!(self.shared.log, "event relay restarting");
    }
}
