//! What the steps before a request answer: a task ready to send, or why it
//! stopped and what the store did with it; and how long a task stopped
//! for a cause of this consumer's own is handed back for.

use chrono::Duration;

use crate::domain::{Payload, SendTarget};
use crate::payload_crypto::PayloadCryptoError;
use crate::policy::Gate;
use crate::store::TransitionOutcome;

/// How long a task whose payload this consumer cannot open is handed back
/// for, so a consumer with the right key can take it (one that no key
/// opens, until its horizon: `unreadable_gate`).
pub const UNREADABLE_HAND_BACK: Duration = Duration::minutes(1);

/// How long a task whose destination this consumer's address policy
/// refuses is handed back for: the destination waits, its tasks unsent
/// and not failed, until the policy lets it through (an allowlist restored
/// by a restart) or their horizon passes.
pub const REFUSED_HAND_BACK: Duration = Duration::minutes(1);

/// What `before_request` found. Made once per send and moved once, so
/// the size of its ready variant costs nothing worth a box.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Prepared {
    /// Send it now: the opened payload and the destination as just read;
    /// `read` when the step read the row itself (the consumer knew none),
    /// for the consumer to keep.
    Ready {
        payload: Payload,
        target: SendTarget,
        read: bool,
    },
    /// Not now; the store already has the task back (or ended).
    Stopped(Stop),
}

/// Why a task was not sent, and what the store did with it.
#[derive(Debug)]
pub enum Stop {
    /// Its payload did not open: another process's key sealed it (handed
    /// back for [`UNREADABLE_HAND_BACK`]), or no key opens it (handed back
    /// until its horizon, then failed `payload_unreadable`: `failed`).
    Unreadable {
        error: PayloadCryptoError,
        failed: bool,
        outcome: TransitionOutcome,
    },
    /// The consumer's address policy refuses the destination's URL: handed
    /// back for [`REFUSED_HAND_BACK`].
    Refused {
        why: String,
        outcome: TransitionOutcome,
    },
    /// An operator cancelled, moved or erased the task while it waited
    /// for its request: handed back unsent, for the change to settle.
    Changed { outcome: TransitionOutcome },
    /// The checks before a request said no; `pause_left`, what is left of
    /// the destination's pause when it was the reason (for the consumer to
    /// hold its other tasks of the destination by).
    Checks {
        gate: Gate,
        pause_left: Option<Duration>,
        outcome: TransitionOutcome,
    },
}
