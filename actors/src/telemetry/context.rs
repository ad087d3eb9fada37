//! A task's `TraceParent` as OpenTelemetry's span context, and back.

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::Context;
use remit::domain::TraceParent;

/// The span `parent` names, as the remote parent of the spans started in
/// the context answered.
pub fn remote_parent(parent: &TraceParent) -> Context {
    Context::new().with_remote_span_context(span_context(parent))
}

/// The span `parent` names, remote (another process, or this one earlier).
pub fn span_context(parent: &TraceParent) -> SpanContext {
    SpanContext::new(
        TraceId::from(parent.trace_id_value()),
        SpanId::from(parent.parent_id_value()),
        TraceFlags::new(parent.flags()),
        true,
        TraceState::default(),
    )
}

/// The `traceparent` that makes the next hop a child of `span`; `None` for
/// an invalid context.
pub fn traceparent_of(span: &SpanContext) -> Option<TraceParent> {
    if !span.is_valid() {
        return None;
    }
    TraceParent::new(
        u128::from_be_bytes(span.trace_id().to_bytes()),
        u64::from_be_bytes(span.span_id().to_bytes()),
        span.trace_flags().to_u8(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_goes_through_a_span_context_unchanged() {
        let parent =
            TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        let context = span_context(&parent);
        assert!(context.is_remote() && context.is_sampled());
        assert_eq!(
            context.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(traceparent_of(&context), Some(parent));
        assert_eq!(traceparent_of(&SpanContext::empty_context()), None);
    }
}
