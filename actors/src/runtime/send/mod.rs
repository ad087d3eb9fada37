//! Carrying a claimed task to its receiver: the Senders, one delivery's
//! way from the checks before its request to the decision it hands the
//! Finisher, and what a send reads and learns on the way.
//!
//! # Layout
//! - `pool`: the region's Senders, handed work round-robin; `sender`:
//!   one Sender, carrying many deliveries at once.
//! - `delivery`: one task's delivery, from the checks before its request
//!   to the committed next state.
//! - `consumer`: what a sender knows that the store does not, as the
//!   core's delivery asks it.
//! - `transport`: one HTTP request through awc, and what came back.
//! - `delivered`: how one delivery ended, counted and logged.
//! - `under_way`: a request's places under the in-flight caps, given
//!   back once its answer is in.

pub(super) mod consumer;
pub(super) mod delivered;
pub(super) mod delivery;
pub(super) mod pool;
pub(super) mod sender;
pub(super) mod transport;
pub(super) mod under_way;
