//! Leasing the region's due work and routing it: the Claimer, the
//! listener that wakes it, and what this process holds back.
//!
//! # Layout
//! - `claimer`: the Claimer, which leases due work within the free
//!   capacity and routes each task to its destination's throttle.
//! - `listener`: the region's LISTEN connection: wake-ups, pauses and
//!   operators' changes as other processes announce them.
//! - `holds`: destinations this process holds until some time (pauses
//!   from a 429, holds a throttle sets from what it has queued).
//! - `changed_tasks`: tasks an operator changed while this process may
//!   hold them claimed and unsent.

pub(super) mod changed_tasks;
pub(super) mod claimer;
pub(super) mod holds;
pub(super) mod listener;
