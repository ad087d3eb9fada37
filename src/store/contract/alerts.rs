//! `Alerts`: the region's alert check, which finds what a person should
//! hear about (tasks that ended failed, reminders late against their
//! deadline or near the end of their retry horizon, destinations failing
//! and recovered) and writes it, coalesced, to the outbox of operational
//! events that the event relay turns into webhooks.
//!
//! One check is one transaction: what it found, the events it wrote and
//! how far it has looked (its cursors, the levels announced, what waits
//! for the next window) commit together, and a check holds the region's
//! lock (PostgreSQL: an advisory lock; SQLite: the write lock; the model:
//! its mutex), so two processes of a region never announce one thing
//! twice. See `policy::alerts` and `store::rules::alerts` for the rules.

use std::future::Future;

use chrono::Duration;

use super::error::StoreError;
use crate::domain::{DestinationEvent, Region};

/// What one check looks for, and how it coalesces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertCheck {
    pub region: Region,
    /// Without an events receiver nothing is announced: the check only
    /// drops the failures it would have reported, so they do not pile up.
    pub announce: bool,
    /// A reminder still live this long after its `not_before` is late
    /// (a destination's own setting overrides it: `policy::late_after`).
    pub late_after: Duration,
    /// A live task whose retry horizon ends within this is announced.
    pub horizon_warning: Duration,
    /// At most one event of a coalesced kind per destination in any
    /// window this long.
    pub window: Duration,
    /// The levels, in percent of the disable threshold, announced as
    /// `destination.failing`.
    pub failing_levels: Vec<u8>,
    /// The most tasks an event names (its count covers them all).
    pub sample: usize,
    /// The most tasks the check reads of each kind (and of each
    /// destination's late ones): a bound on its work; the rest waits for
    /// the next check.
    pub batch: u32,
    /// Destinations whose id starts with this are never reported on (the
    /// events receivers themselves, whose trouble an event could not
    /// reach anyone through).
    pub quiet_prefix: String,
}

/// What one check did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlertsChecked {
    /// Another process of the region held the check's lock: nothing done.
    pub busy: bool,
    /// Events written to the outbox.
    pub events: u32,
    /// Tasks found of each coalesced kind (failed, late, horizon ending),
    /// whether announced now or held for the next window.
    pub failed: u32,
    pub late: u32,
    pub horizon_ending: u32,
}

pub trait Alerts: Sync {
    /// Up to `limit` of the region's operational events not yet turned
    /// into webhooks, oldest first. A destination disabled by a finish or
    /// by hand, or enabled, writes one in the same transaction.
    fn destination_events(
        &self,
        region: Region,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<DestinationEvent>, StoreError>> + Send;

    /// Deletes the events with these ids (they have been scheduled);
    /// returns how many were there.
    fn forget_destination_events(
        &self,
        ids: &[uuid::Uuid],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Runs one check of `check.region` at the store's now, in one
    /// transaction.
    fn check_alerts(
        &self,
        check: &AlertCheck,
    ) -> impl Future<Output = Result<AlertsChecked, StoreError>> + Send;
}
