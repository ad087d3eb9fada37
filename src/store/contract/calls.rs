//! The values the [`Store`](super::Store) calls carry: what a claim asks
//! for, what a finish or a token take says, and what each returns.

use chrono::Duration;

use crate::domain::{ClaimedTask, Destination, DestinationId, Lease, Region, Task, TenantId};
use crate::policy::{Decision, Quota};

/// What a guarded transition did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransitionOutcome {
    /// The row moved (or had already moved this way under this lease).
    Applied,
    /// The lease is no longer this caller's: another lease owner reclaimed the
    /// row, or it was finished or released. Nothing changed.
    Fenced,
    NotFound,
    /// A hand-back (`hand_back`) found nothing could happen before the task's
    /// retry horizon: the task failed with `retry_horizon` instead.
    PastHorizon,
}

/// Which rows a lease owner wants to lease.
#[derive(Debug, Clone)]
pub struct ClaimRequest {
    pub region: Region,
    /// Who will hold the leases: the lease owner, recorded on each row
    /// (`lease_owner`) and on each attempt.
    pub lease_owner: String,
    pub lease: Duration,
    /// Most rows in one claim.
    pub limit: u32,
    /// Most rows of one destination in one claim, so that one busy
    /// destination cannot take every slot.
    pub per_destination_cap: u32,
    /// Destinations that take fewer rows than `per_destination_cap` in one
    /// claim, each with its own cap: what its rate sends before the rows
    /// would have to go back (the runtime's pace of a destination with a
    /// rate of its own). Others take up to `per_destination_cap`.
    pub caps: Vec<(DestinationId, u32)>,
    /// Destinations this lease owner cannot start anything for soon (paused,
    /// or at their in-flight cap): their rows are left to others or later,
    /// instead of being claimed only to be handed back.
    pub skip: Vec<DestinationId>,
    /// Where the previous claim's turns ended ([`ClaimRequest::resume_point`]):
    /// this claim starts its turn over the destinations after that
    /// destination, and its turn over each destination's tenants after that
    /// tenant, so destinations, and tenants within a destination, take turns
    /// however many there are.
    pub resume_after: Option<ResumePoint>,
}

/// Where a claim's turns resume: the last destination the previous claim
/// reached, and the last tenant it reached (one cursor for every
/// destination's tenants: each turn over a destination's tenants starts
/// after it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumePoint {
    pub destination: DestinationId,
    pub tenant: TenantId,
}

impl ClaimRequest {
    /// The most rows of `destination` this claim takes.
    pub fn cap_of(&self, destination: &str) -> u32 {
        self.caps
            .iter()
            .find(|(id, _)| id.as_str() == destination)
            .map_or(self.per_destination_cap, |(_, cap)| {
                (*cap).min(self.per_destination_cap)
            })
    }

    /// Where the next claim should start its turns, given what this one
    /// claimed: after the last destination it reached and after the last
    /// tenant it reached, each counting the wrap round to the start; from
    /// the start again when it found nothing.
    pub fn resume_point(&self, claimed: &[ClaimedTask]) -> Option<ResumePoint> {
        let previous = self.resume_after.as_ref();
        let destination = last_reached(
            previous.map_or("", |p| p.destination.as_str()),
            claimed.iter().map(|c| &c.task.destination_id),
            DestinationId::as_str,
        )?;
        let tenant = last_reached(
            previous.map_or("", |p| p.tenant.as_str()),
            claimed.iter().map(|c| &c.task.tenant_id),
            TenantId::as_str,
        )?;
        Some(ResumePoint {
            destination,
            tenant,
        })
    }

    /// The destination a claim's turn over destinations starts after.
    pub(in crate::store) fn destination_after(&self) -> &str {
        self.resume_after
            .as_ref()
            .map_or("", |p| p.destination.as_str())
    }

    /// The tenant each turn over a destination's tenants starts after.
    pub(in crate::store) fn tenant_after(&self) -> &str {
        self.resume_after.as_ref().map_or("", |p| p.tenant.as_str())
    }
}

/// The last of `reached` in a turn that started after `after` and may have
/// wrapped round: the largest at or before `after` when it wrapped, else the
/// largest.
fn last_reached<'a, T: Clone + 'a>(
    after: &str,
    reached: impl Iterator<Item = &'a T> + Clone,
    key: fn(&T) -> &str,
) -> Option<T> {
    let wrapped = reached
        .clone()
        .filter(|x| key(x) <= after)
        .max_by(|a, b| key(a).cmp(key(b)));
    wrapped
        .or_else(|| reached.max_by(|a, b| key(a).cmp(key(b))))
        .cloned()
}

/// One destination's ask for rate tokens, as [`Rates::take_tokens_many`]
/// takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct RateRequest {
    pub destination: DestinationId,
    pub rate_per_second: f64,
    pub burst: u32,
    pub want: u32,
}

/// What a receiver announced of its quota on a response from the
/// destination, as [`Rates::learn_quotas`] takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaNote {
    pub destination: DestinationId,
    pub quota: Quota,
    /// The number of the token the answered request was sent with (see
    /// [`RateGrant::Granted`]): the tokens numbered above it went out after
    /// it, uncounted in what the receiver announced, and a note with a
    /// lower number than the stored one is an older view of the
    /// receiver's window, unless it was sent after that one was learned.
    pub token: u64,
    /// When the answered request went out, on the store's clock (as the
    /// process measures it from its claim): tokens are numbered as they
    /// are granted, and a process may send one granted long before another
    /// process's, so a note whose request went out after the stored quota
    /// was learned is fresher whatever its number.
    pub sent_at: chrono::DateTime<chrono::Utc>,
}

/// One attempt's end, as a batch of [`Leases::finish_many`] carries it.
#[derive(Debug, Clone)]
pub struct Finish {
    pub lease: Lease,
    pub destination: DestinationId,
    pub decision: Decision,
}

/// What a batch of finishes did: one outcome per finish, in order, and
/// the destinations the batch disabled (a failure that made a streak long
/// enough), each once and as the whole batch left it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Finished {
    pub outcomes: Vec<TransitionOutcome>,
    pub disabled: Vec<AutoDisabled>,
}

/// What a take from a destination's rate bucket returned: tokens granted
/// now, or how long until one is. (Named apart from the API's bearer
/// tokens and the leases' fencing tokens.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateGrant {
    /// `tokens` granted, numbered up to `last`: a destination's bucket
    /// numbers every token it grants, from 1, across every process, so
    /// these are `last - tokens + 1 ..= last`.
    Granted {
        tokens: u32,
        last: u64,
    },
    WaitFor(std::time::Duration),
}

/// What a replay did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replayed {
    Replayed(Task),
    /// The task is not `failed`; replaying anything else would resend a
    /// delivered webhook or race a live lease.
    NotFailed(Task),
    NotFound,
}

/// The result of `schedule`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scheduled {
    pub task: Task,
    /// False when the same request had been scheduled before.
    pub created: bool,
}

/// A destination a finish disabled, as the runtime reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoDisabled {
    pub destination: Destination,
}
