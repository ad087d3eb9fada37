//! The span of a claim that found work. Claims that find nothing (an idle
//! region polls several times a second) make no span. A claim serves tasks
//! of many traces, so it is a trace of its own, linked to each task's.

use std::time::SystemTime;

use opentelemetry::trace::{Link, Span as _, SpanKind, Tracer as _};
use opentelemetry::KeyValue;
use remit::domain::{ClaimedTask, Region};

use super::context::span_context;
use super::exporter::Telemetry;

/// Records the claim that started at `started` and brought `claimed`
/// (asked for at most `limit`). Nothing when tracing is off.
pub fn record_claim(
    telemetry: &Telemetry,
    started: SystemTime,
    region: Region,
    limit: u32,
    claimed: &[ClaimedTask],
) {
    let Some(tracer) = telemetry.tracer() else {
        return;
    };
    let reclaimed = claimed.iter().filter(|c| c.reclaimed).count();
    let links = claimed
        .iter()
        .filter_map(|c| c.task.traceparent.as_ref())
        .map(|parent| Link::with_context(span_context(parent)))
        .collect();
    let mut span = tracer
        .span_builder("claim")
        .with_kind(SpanKind::Internal)
        .with_start_time(started)
        .with_links(links)
        .with_attributes([
            KeyValue::new("remit.region", region.as_str().to_owned()),
            KeyValue::new("remit.claim.limit", i64::from(limit)),
            KeyValue::new(
                "remit.claim.count",
                i64::try_from(claimed.len()).unwrap_or(i64::MAX),
            ),
            KeyValue::new(
                "remit.claim.reclaimed",
                i64::try_from(reclaimed).unwrap_or(i64::MAX),
            ),
        ])
        .start(tracer);
    span.end();
}
