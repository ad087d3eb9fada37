//! What a webhook task is, independent of how it is stored or sent.
//!
//! # Layout
//! - `ids`: identifiers and the residency region, checked once at the edge.
//! - `task`: a logical webhook and its life cycle; `payload` the body a
//!   product hands over (health data, never logged); `idempotency` the key
//!   every attempt carries; `trace_parent` the trace it belongs to.
//! - `attempt`: one try, as the append-only attempt log keeps it.
//! - `destination`: a receiver and its region; `destination_settings` its
//!   own limits and policies, `custom_header` the headers it sends;
//!   `destination_change` what an operator's
//!   change of it asks; `signing_secret` its secrets; `destination_event`
//!   an operational event about it; `destination_hour` its health over an
//!   hour, counted with `histogram`.
//! - `api_token`: who may call the API, and what each may do there.
//! - `audit`: an admin action as the audit log keeps it.
//! - `reconcile`: what a reconciliation pass found; `retention` which
//!   ended tasks may be forgotten.

mod api_token;
mod attempt;
mod audit;
mod custom_header;
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
pub use custom_header::{
    header_field, secret_hint, CustomHeader, HeaderValue, MAX_HEADERS, RESERVED_HEADERS,
};
pub use destination::{
    checked_url, Destination, DestinationHealth, DisableOverrides, NewDestination, SendTarget,
    MAX_DISABLE_AFTER_SECONDS,
};
pub use destination_change::{DestinationChange, Setting};
pub use destination_event::{DestinationEvent, EventKind};
pub use destination_hour::{hour_of, AttemptClass, AttemptCounts, DestinationHour};
pub use destination_settings::{
    settings_reset_sql, DestinationSettings, SettingValue, SETTING_NAMES,
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
