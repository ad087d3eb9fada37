//! What a webhook task is, independent of how it is stored or sent.

mod attempt;
mod destination;
mod destination_event;
mod idempotency;
mod ids;
mod payload;
mod reconcile;
mod retention;
mod task;

pub use attempt::{Attempt, AttemptOutcome, AttemptRecord};
pub use destination::{
    Destination, DestinationHealth, DisableOverrides, NewDestination, SendTarget,
    MAX_DISABLE_AFTER_SECONDS,
};
pub use destination_event::{DestinationEvent, EventKind};
pub use idempotency::{idempotency_key, legacy_idempotency_key};
pub use ids::{quoted, DestinationId, InvalidInput, Region, ReminderId, TaskId, TenantId};
pub use payload::{Payload, MAX_PAYLOAD_BYTES};
pub use reconcile::{Finding, LedgerEntry, ReconcileReport, ReconcileRequest, TaskSummary};
pub use retention::{PruneReport, PruneRequest};
pub use task::{ClaimedTask, FailureReason, Lease, NewTask, Task, TaskState};
