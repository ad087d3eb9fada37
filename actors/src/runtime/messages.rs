//! The messages the runtime's actors exchange.

use std::time::Instant;

use actix::prelude::*;
use chrono::{DateTime, Utc};
use remit::domain::{ClaimedTask, DestinationId};

/// A claimed task held in memory, on its way to a receiver.
#[derive(Debug, Clone)]
pub struct Work {
    pub claimed: ClaimedTask,
    /// When the claim returned it; bounds how long it may wait here.
    pub claimed_at: Instant,
}

impl Work {
    pub fn destination(&self) -> &DestinationId {
        &self.claimed.task.destination_id
    }
}

/// Claimer → Supervisor: route this task to its destination's throttle.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Route(pub Work);

/// Supervisor → Throttle: a task for this destination.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Admit(pub Work);

/// Throttle → Sender: send it now.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Deliver {
    pub work: Work,
    pub throttle: Recipient<Sent>,
}

/// Sender → Throttle: one request of this destination is over.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Sent {
    /// The receiver asked every task of the destination to wait until then.
    pub pause_until: Option<DateTime<Utc>>,
}

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
