//! What runs beside the deliveries, on a timer: reconciliation,
//! retention, the alert check and the relay of its events.
//!
//! # Layout
//! - `reconciler`: the Reconciler, `remit reconcile`'s checks, logged.
//! - `pruner`: the Pruner, keeping the region's tables to recent
//!   history.
//! - `alerter`: the Alerter, the region's alert check.
//! - `event_relay`: the EventRelay, turning operational events into
//!   webhooks.

pub(super) mod alerter;
pub(super) mod event_relay;
pub(super) mod pruner;
pub(super) mod reconciler;
