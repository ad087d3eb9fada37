//! A Throttle per destination: tokens from the destination's bucket (kept
//! in the database, so the rate holds across every process of the region;
//! a token dispatched with a task that goes back unsent is kept for the
//! next request, so tokens pay for requests sent, not for claims),
//! a cap on requests in flight (owned permits that free themselves), and
//! the destination's pause, which holds all its tasks.
//!
//! Nothing waits here for long. A task that would wait past a small
//! fraction of its lease, or whose destination is paused, goes back to the
//! database (released, not counted as an attempt), due again when it could
//! next go: the pause's end, or about when the bucket would have a token
//! for it (`stay`). When the bucket cannot be read (the database is away)
//! the tasks keep their leases and the take is tried again shortly, while the oldest
//! still has time for a send; a hand-back that fails is retried likewise.
//!
//! A throttle lives only while its destination has work here: idle for a
//! moment, it is evicted (`idle`), so memory follows the destinations in
//! flight, not every destination ever sent to.
//!
//! # Layout
//! - `actor`: [`Throttle`], the actor, and what it does with each task.
//! - `limits`: a throttle's limits, the destination's own settings over
//!   the runtime's.
//! - `unspent`: the tokens taken and not yet spent.
//! - `stay`: how long claimed work may wait here, and when a task sent
//!   back is due again; `idle`: the eviction.
//! - `spare`: tokens an evicted throttle took and had not spent;
//!   `keeper`: what a throttle knows of its supervisor.

pub(super) mod spare;

mod actor;
mod idle;
mod keeper;
mod limits;
mod stay;
mod unspent;

pub use actor::Throttle;
pub use keeper::Keeper;
