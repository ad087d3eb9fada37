//! The messages the runtime's actors exchange.

use std::time::Instant;

use actix::prelude::*;
use remit::domain::{ClaimedTask, DestinationId};
use tokio::sync::OwnedSemaphorePermit;

use super::capacity::Slot;

/// A claimed task held in memory, on its way to a receiver. It owns its
/// slot in memory: wherever it is dropped, the slot is free again.
#[derive(Debug)]
pub struct Work {
    pub claimed: ClaimedTask,
    /// Taken before the claim's statement started, so the lease (which the
    /// database started later) never ends before `claimed_at + lease`.
    pub claimed_at: Instant,
    pub slot: Slot,
}

impl Work {
    pub fn destination(&self) -> &DestinationId {
        &self.claimed.task.destination_id
    }
}

/// How one delivery ended, for the sender's bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivered {
    /// The next state is committed (or the lease had moved on).
    Finished,
    /// Handed back unsent: the lease was too short, the destination is
    /// paused, or the payload cannot be opened here.
    HandedBack,
}

/// Claimer → Supervisor: route this task to its destination's throttle.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Route(pub Work);

/// Supervisor → Throttle: a task for this destination.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Admit(pub Work);

/// Throttle → Sender: send it now. The permit is the destination's
/// in-flight slot; it frees itself when the sender drops it.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Deliver {
    pub work: Work,
    /// The number of the token the request goes out with.
    pub token: u64,
    pub in_flight: InFlight,
    pub throttle: Recipient<Wake>,
}

/// A request's places under the in-flight caps: one of its destination's
/// and one of the process's (`send.max_in_flight`). Both free themselves
/// when dropped, which the delivery does once the answer is in
/// (`send::under_way`).
#[derive(Debug)]
pub struct InFlight {
    pub destination: OwnedSemaphorePermit,
    pub process: OwnedSemaphorePermit,
}

/// To a Throttle: something changed (a request ended, the destination was
/// paused); look at the queue again.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Wake {
    /// A task it dispatched went back without its request: the token it
    /// went with (by number) is still unspent (tokens pay for requests
    /// sent, not claims).
    pub unsent: Option<u64>,
}

impl Wake {
    pub const CHANGED: Wake = Wake { unsent: None };
}

/// Supervisor → Throttle: the destination's settings, as just read after
/// a change was heard; its own limits go from now on.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Retune(pub Box<remit::domain::DestinationSettings>);

/// Throttle → Supervisor: nothing has been queued or in flight here for a
/// while; evict me unless more work is on its way. `admitted` counts the
/// tasks it was ever handed, so the supervisor, which counts what it sent,
/// can tell whether an `Admit` is still in the throttle's mailbox.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Idle {
    pub destination: DestinationId,
    /// Which throttle of the destination this is (a later one may have
    /// replaced it since).
    pub throttle: u64,
    pub admitted: u64,
}

/// Supervisor → Throttle: you are no longer routed to; give what you hold
/// back and let go. Sent only when every task sent to it was admitted.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Evict;

/// Claimer → Supervisor: another process paused this destination.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct DestinationChanged(pub DestinationId);

/// Stop taking new work and hand back what is queued. Resolves when the
/// queued tasks are back in the database.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Drain;

/// Give up on in-flight sends: release their leases now (shutdown past its
/// grace period).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Abandon;

/// Supervisor: stop gracefully.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Shutdown;

/// Claimer: look for work now (a NOTIFY arrived, or a timer fired).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Poll;

/// To a Sender: fail now, as a panic in a delivery would (a drill, and the
/// demo's crash): every task it holds goes back to the database (handed back
/// if unsent, abandoned if its request may have gone out) and the sender
/// stops, so its supervisor restarts it. Answers the tasks it held.
#[derive(Debug, Message)]
#[rtype(result = "Vec<remit::domain::TaskId>")]
pub struct Crash;
