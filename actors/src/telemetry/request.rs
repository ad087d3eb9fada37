//! The API request's span. It is the child of the caller's `traceparent`
//! when the request brings a valid one, the root of a new trace otherwise
//! (an invalid header is ignored, as W3C Trace Context says). Handlers
//! that schedule tasks keep its `traceparent` with them ([`RequestTrace`]),
//! so every attempt of those tasks is traced as its child.

use std::future::{ready, Ready};

use actix_web::body::MessageBody;
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer as _};
use opentelemetry::{Context, KeyValue};
use remit::domain::TraceParent;

use super::context::{remote_parent, traceparent_of};
use super::exporter::Telemetry;

/// The request's own span, as a `traceparent`; `None` when tracing is off.
#[derive(Debug, Clone, Default)]
pub struct RequestTrace(pub Option<TraceParent>);

impl RequestTrace {
    /// The trace the middleware put on `request`; none when tracing is off.
    pub fn of(request: &HttpRequest) -> Self {
        request
            .extensions()
            .get::<RequestTrace>()
            .cloned()
            .unwrap_or_default()
    }

    /// The trace id, for the request's log lines.
    pub fn trace_id(&self) -> Option<&str> {
        self.0.as_ref().map(TraceParent::trace_id)
    }
}

impl FromRequest for RequestTrace {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(Self::of(request)))
    }
}

/// Middleware: one server span per request, named by method and route
/// (`POST /v1/tasks`), never by a path's ids. With tracing off it only
/// passes the request on.
pub async fn trace_request(
    telemetry: Telemetry,
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let Some(tracer) = telemetry.tracer().cloned() else {
        return next.call(request).await;
    };
    let parent = request
        .headers()
        .get("traceparent")
        .and_then(|value| value.to_str().ok())
        .and_then(|text| TraceParent::parse(text).ok())
        .map_or_else(Context::new, |parent| remote_parent(&parent));
    let method = request.method().as_str().to_owned();
    let route = request
        .match_pattern()
        .unwrap_or_else(|| "unmatched".into());
    let mut span = tracer
        .span_builder(format!("{method} {route}"))
        .with_kind(SpanKind::Server)
        .with_attributes([
            KeyValue::new("http.request.method", method),
            KeyValue::new("http.route", route),
        ])
        .start_with_context(&tracer, &parent);
    // Kept even when the caller's trace is not sampled: the attempts then
    // follow the caller's decision instead of starting traces of their own.
    let own = RequestTrace(traceparent_of(span.span_context()));
    request.extensions_mut().insert(own);
    let response = next.call(request).await;
    match &response {
        Ok(response) => {
            let status = response.status();
            span.set_attribute(KeyValue::new(
                "http.response.status_code",
                i64::from(status.as_u16()),
            ));
            if status.is_server_error() {
                span.set_status(Status::error(status.as_str().to_owned()));
            }
        }
        Err(e) => {
            let status = e.as_response_error().status_code();
            span.set_attribute(KeyValue::new(
                "http.response.status_code",
                i64::from(status.as_u16()),
            ));
            span.set_status(Status::error(status.as_str().to_owned()));
        }
    }
    span.end();
    response
}
