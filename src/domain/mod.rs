//! What a webhook task is, independent of how it is stored or sent.

mod api_token;
mod attempt;
mod audit;
mod destination;
mod destination_change;
mod destination_event;
mod destination_hour;
mod destination_settings;
mod histogram;
mod idempotency;
mod ids;
mod payload;
mod reconcile;
mod retention;
mod signing_secret;
mod task;
mod trace_parent;

pub use api_token::{
    token_hash, ApiToken, NewApiToken, Scope, TokenGrant, TokenHash, TokenId, TOKEN_PREFIX,
};
pub use attempt::{Attempt, AttemptOutcome, AttemptRecord};
pub use audit::{
    Actor, AuditAction, AuditEntry, AuditFilter, AuditPage, AuditTarget, NewAuditEntry, TargetKind,
};
pub use destination::{
    checked_url, Destination, DestinationHealth, DisableOverrides, NewDestination, SendTarget,
    MAX_DISABLE_AFTER_SECONDS,
};
pub use destination_change::{DestinationChange, Setting};
pub use destination_event::{DestinationEvent, EventKind};
pub use destination_hour::{hour_of, AttemptClass, AttemptCounts, DestinationHour};
pub use destination_settings::{
    header_field, secret_hint, CustomHeader, DestinationSettings, HeaderValue, MAX_HEADERS,
    RESERVED_HEADERS,
};
pub use histogram::{bucket_bounds_us, bucket_of, Histogram, HISTOGRAM_BUCKETS};
pub use idempotency::{idempotency_key, legacy_idempotency_key};
pub use ids::{
    quoted, DestinationId, InvalidInput, OrderingKey, Region, ReminderId, TaskId, TenantId,
};
pub use payload::{Payload, MAX_PAYLOAD_BYTES};
pub use reconcile::{Finding, LedgerEntry, ReconcileReport, ReconcileRequest, ReportedTask};
pub use retention::{PruneReport, PruneRequest};
pub use signing_secret::{
    valid_at, Rotation, SigningSecret, TargetSecret, DEFAULT_OVERLAP, EXPIRY_TOLERANCE,
};
pub use task::{
    Cancellation, ClaimedTask, FailureReason, Lease, NewTask, Task, TaskState, WaitingChange,
};
pub use trace_parent::TraceParent;
