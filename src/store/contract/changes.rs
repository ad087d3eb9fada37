//! `Changes`: what an operator (or the product, through the API) changes
//! in a task's life after scheduling it: cancel it, move it, erase its
//! payload, bring its retries forward. Each is one short transaction,
//! fenced like every transition: a task in flight is never changed under
//! its lease; the change waits for the attempt to end
//! ([`WaitingChange`](crate::domain::WaitingChange)) and
//! [`Changes::settle_changes`] applies it.

use std::future::Future;

use chrono::{DateTime, Utc};

use super::error::StoreError;
use crate::domain::{DestinationId, Payload, Region, Task, TaskId, TenantId};

pub trait Changes: Sync {
    /// Cancels a task that has not ended: one not in flight ends
    /// `cancelled` now (and leaves its ordering line); one in flight keeps
    /// its lease, is never claimed again, and ends `cancelled` once its
    /// attempt ends without a delivery. A task already cancelled is
    /// answered as it is (a repeat), one delivered or failed is left alone
    /// (a move that waited on a failed attempt lapsed with it).
    fn cancel(
        &self,
        id: TaskId,
        by: &str,
    ) -> impl Future<Output = Result<Cancel, StoreError>> + Send;

    /// Moves a task that has not been delivered to a new deadline (and,
    /// when given, a new payload under the same idempotency key): its
    /// horizon keeps its length from the new deadline, its attempts their
    /// numbers. A failed or cancelled task comes back `pending` with a
    /// fresh attempt budget, as a replay does, only when the change may
    /// `revive` it ([`Move::Ended`] otherwise). A task in flight moves once
    /// its attempt ends, unless the attempt ended it (its payload is
    /// replaced now). A task of a deleted destination is never moved
    /// ([`Move::DestinationDeleted`]).
    fn reschedule(
        &self,
        id: TaskId,
        change: &Reschedule,
    ) -> impl Future<Output = Result<Move, StoreError>> + Send;

    /// Erases a task's payload: the sealed bytes leave the database now,
    /// the envelope and the attempt log stay. A task that has not ended is
    /// cancelled by it (after its attempt, when one is in flight).
    fn erase(&self, id: TaskId, by: &str)
        -> impl Future<Output = Result<Erase, StoreError>> + Send;

    /// Erases the payload of up to `limit` of a tenant's tasks whose payload
    /// is still there, cancelling those that have not ended, in one
    /// transaction: call until it answers fewer than `limit`.
    fn erase_tenant(
        &self,
        tenant: &TenantId,
        by: &str,
        limit: u32,
    ) -> impl Future<Output = Result<ErasedTenant, StoreError>> + Send;

    /// Makes every task of the destination waiting for a retry
    /// (`retry_wait`, not leased) due now (the store's now), keeping its
    /// attempts and key; only one tenant's when `tenant` is given. A
    /// destination's pause still holds. Answers how many moved.
    fn retry_now(
        &self,
        destination: &DestinationId,
        tenant: Option<&TenantId>,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Applies up to `limit` of the region's waiting changes whose attempt
    /// has ended (or whose lease ran out, its lost attempt logged
    /// `abandoned`): a cancel ends the task `cancelled`, a move moves it;
    /// after a delivery the change lapses. Answers how many it settled.
    fn settle_changes(
        &self,
        region: Region,
        limit: u32,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}

/// A reschedule: the new deadline, and the payload that replaces the
/// current one, if any.
#[derive(Debug, Clone)]
pub struct Reschedule {
    pub not_before: DateTime<Utc>,
    pub payload: Option<Payload>,
    /// A token's id, `cli`, or `bootstrap`.
    pub by: String,
    /// Whether the caller may bring back a task that has ended (`failed` or
    /// `cancelled`) with a fresh attempt budget: the scope replay takes.
    pub revive: bool,
}

/// What a cancel did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cancel {
    /// Ended `cancelled` now.
    Cancelled(Task),
    /// Cancelled before: the task as it is.
    AlreadyCancelled(Task),
    /// An attempt is in flight: the task ends `cancelled` when it ends
    /// without a delivery, and is never tried again.
    AfterAttempt(Task),
    /// Delivered or failed: nothing to cancel.
    Ended(Task),
    NotFound,
}

/// What a reschedule did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Move {
    /// Moved now (a failed or cancelled task is back to `pending`).
    Moved(Task),
    /// An attempt is in flight: the task moves when it ends without a
    /// delivery.
    AfterAttempt(Task),
    /// Delivered (or its payload erased): it is not moved.
    Refused(Task),
    /// Failed or cancelled, and the change may not bring it back: it is
    /// not moved.
    Ended(Task),
    /// Its destination was deleted: it is not moved.
    DestinationDeleted(Task),
    NotFound,
}

/// Why a reschedule answered [`Move::Refused`], in words for an answer
/// (`new_payload`: whether it brought a payload).
pub fn why_not_moved(task: &Task, new_payload: bool) -> &'static str {
    use crate::domain::{TaskState, WaitingChange};
    if task.state == TaskState::Delivered {
        "it was delivered; schedule a new reminder to send again"
    } else if task.waiting_change == Some(WaitingChange::Cancel) {
        "it waits to be cancelled after its attempt in flight"
    } else if task.ordering_key.is_some() && task.attempt_count > 0 {
        "it was attempted in its ordering line, which it heads until it ends; \
         cancel it and schedule a new reminder"
    } else if new_payload && task.state == TaskState::Leased {
        "an attempt is in flight; a new payload can be given once it has ended"
    } else {
        "its payload was erased; a reschedule must bring a new payload"
    }
}

/// What an erase did.
#[derive(Debug, Clone, PartialEq, Eq)]
// One answer per request, never held in bulk: boxing the task buys nothing.
#[allow(clippy::large_enum_variant)]
pub enum Erase {
    /// The payload is gone; the task as it stands now (cancelled if it had
    /// not ended, or waiting to be when an attempt is in flight).
    Erased(Task),
    NotFound,
}

/// What one round of a tenant's erasure did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErasedTenant {
    /// Payloads erased.
    pub erased: u64,
    /// Of those, tasks that had not ended and are cancelled now or once
    /// their attempt ends.
    pub cancelled: u64,
}
