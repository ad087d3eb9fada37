//! An attempt's span: from the moment a claimed task is taken up to its
//! committed outcome (or its hand-back). Its parent is the span that
//! scheduled the task (`Task::traceparent`), so the request and every
//! attempt it led to read as one trace; a task scheduled without one
//! starts a trace of its own. The webhook carries this span's
//! `traceparent`, so the receiver can join the trace too.

use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::Span;
use remit::domain::{Task, TraceParent};
use remit::policy::{Decision, Transition, TransportError};
use remit::store::TransitionOutcome;

use super::context::{remote_parent, traceparent_of};
use super::exporter::Telemetry;

/// An attempt's span, or nothing when tracing is off. Ends when dropped,
/// so a delivery that stops early still ends its span.
#[derive(Debug)]
pub struct AttemptSpan {
    span: Option<Span>,
    /// The span as the next hop names it: the webhook's `traceparent`.
    own: Option<TraceParent>,
}

impl AttemptSpan {
    /// Starts the span of `task`'s attempt (`task.attempt_count`, as
    /// claimed).
    pub fn start(telemetry: &Telemetry, task: &Task) -> Self {
        let Some(tracer) = telemetry.tracer() else {
            return Self {
                span: None,
                own: None,
            };
        };
        let parent = task
            .traceparent
            .as_ref()
            .map_or_else(Context::new, remote_parent);
        let span = tracer
            .span_builder("attempt")
            .with_kind(SpanKind::Client)
            .with_attributes([
                KeyValue::new("remit.task.id", task.id.to_string()),
                KeyValue::new("remit.destination.id", task.destination_id.to_string()),
                KeyValue::new("remit.attempt", i64::from(task.attempt_count)),
            ])
            .start_with_context(tracer, &parent);
        let own = traceparent_of(span.span_context());
        Self {
            span: Some(span),
            own,
        }
    }

    /// The `traceparent` header the webhook carries.
    pub fn traceparent(&self) -> Option<&TraceParent> {
        self.own.as_ref()
    }

    /// The trace id, for the attempt's log lines.
    pub fn trace_id(&self) -> Option<&str> {
        self.own.as_ref().map(TraceParent::trace_id)
    }

    /// What the receiver answered, or why nothing came.
    pub fn response(&mut self, response: &Result<(u16, Option<String>), TransportError>) {
        let Some(span) = &mut self.span else {
            return;
        };
        match response {
            Ok((status, _)) => span.set_attribute(KeyValue::new(
                "http.response.status_code",
                i64::from(*status),
            )),
            Err(e) => span.set_attribute(KeyValue::new("error.type", e.as_str())),
        }
    }

    /// The outcome the finish committed: `delivered`, `retry_wait`,
    /// `failed`, `fenced` (another consumer holds the task) or `not_found`.
    pub fn finished(&mut self, outcome: TransitionOutcome, decision: &Decision) {
        let label = match (outcome, &decision.transition) {
            (TransitionOutcome::Applied, Transition::Deliver) => "delivered",
            (TransitionOutcome::Applied, Transition::RetryWait { .. }) => "retry_wait",
            (TransitionOutcome::Applied, Transition::Fail(_)) => "failed",
            (TransitionOutcome::Fenced, _) => "fenced",
            (TransitionOutcome::NotFound, _) => "not_found",
            (TransitionOutcome::PastHorizon, _) => "failed",
        };
        self.outcome(label);
        if let (Some(span), Transition::Fail(reason)) = (&mut self.span, &decision.transition) {
            span.set_attribute(KeyValue::new("remit.failure_reason", reason.code()));
        }
    }

    /// The task went back unsent, or failed unsent (`failed`).
    pub fn unsent(&mut self, label: &'static str) {
        self.outcome(label);
    }

    fn outcome(&mut self, label: &'static str) {
        let Some(span) = &mut self.span else {
            return;
        };
        span.set_attribute(KeyValue::new("remit.outcome", label));
        if matches!(label, "failed" | "fenced" | "not_found") {
            span.set_status(Status::error(label));
        }
    }
}
