//! Traces over OpenTelemetry: a span for each API request, each claim that
//! found work and each attempt, exported over OTLP/HTTP (protobuf) when
//! `tracing.otlp_endpoint` is set. Off by default: then there is no
//! tracer, no exporter and no span, and each place that would make one
//! checks an `Option` and moves on.
//!
//! Spans carry ids (task, destination, region), attempt numbers, statuses
//! and outcomes: never a payload's bytes, and no tenant data beyond ids.
//!
//! # Layout
//! - `exporter`: the tracer and its OTLP exporter, started from the
//!   configuration and flushed at shutdown.
//! - `logged_exporter`: export failures and recoveries, logged once each.
//! - `context`: between a task's `TraceParent` and OpenTelemetry's span
//!   contexts.
//! - `request`: the API request's span (middleware), and the traceparent a
//!   handler keeps with the tasks it schedules.
//! - `claim`: the span of a claim that found work, linked to its tasks'
//!   traces.
//! - `attempt`: an attempt's span, child of the request that scheduled the
//!   task, and the `traceparent` the webhook carries.

mod attempt;
mod claim;
mod context;
mod exporter;
mod logged_exporter;
mod request;

pub use attempt::AttemptSpan;
pub use claim::record_claim;
pub use exporter::{Telemetry, TelemetryError};
pub use request::{trace_request, RequestTrace};
