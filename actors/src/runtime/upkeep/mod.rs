//! What runs beside the deliveries, on a timer: reconciliation,
//! retention, the alert check and the relay of its events, and the
//! bulk jobs worked to the end.
//!
//! # Layout
//! - `reconciler`: the Reconciler, `remit reconcile`'s checks, logged.
//! - `pruner`: the Pruner, keeping the region's tables to recent
//!   history.
//! - `alerter`: the Alerter, the region's alert check.
//! - `event_relay`: the EventRelay, turning operational events into
//!   webhooks.
//! - `jobs`: bulk replays and cancels worked to the end, batch by batch,
//!   by whichever process gets to them.

pub(super) mod alerter;
pub(super) mod event_relay;
pub mod jobs;
pub(super) mod pruner;
pub(super) mod reconciler;
