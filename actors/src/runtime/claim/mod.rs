//! Leasing the region's due work and routing it: the Claimer and the
//! listener that wakes it.
//!
//! # Layout
//! - `claimer`: the Claimer, which leases due work within the free
//!   capacity and routes each task to its destination's throttle.
//! - `listener`: the region's LISTEN connection: wake-ups, pauses and
//!   operators' changes as other processes announce them.

pub(super) mod claimer;
pub(super) mod listener;
