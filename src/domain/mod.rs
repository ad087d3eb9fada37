//! What a webhook task is, independent of how it is stored or sent.

mod destination;
mod ids;
mod payload;
mod task;

pub use destination::{Destination, NewDestination};
pub use ids::{DestinationId, InvalidInput, Region, ReminderId, TaskId, TenantId};
pub use payload::{Payload, MAX_PAYLOAD_BYTES};
pub use task::{
    AttemptOutcome, AttemptRecord, ClaimedTask, FailureReason, NewTask, Task, TaskState,
};
