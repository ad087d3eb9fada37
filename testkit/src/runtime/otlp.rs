//! An OTLP/HTTP receiver for the tracing tests: it listens on
//! 127.0.0.1:0, takes `POST /v1/traces` (protobuf) as a collector does,
//! and keeps every span it is sent, decoded with the OpenTelemetry
//! project's own protocol types (not remit's code).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use actix_web::{web, HttpResponse};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use parking_lot::Mutex;
use prost::Message;

use super::receiver::serve;

/// One span as the collector got it; ids in lowercase hex, the parent's
/// empty for a root span.
#[derive(Debug, Clone)]
pub struct ExportedSpan {
    pub name: String,
    pub kind: i32,
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: String,
    pub attributes: HashMap<String, String>,
    /// (trace id, span id) of each linked span.
    pub links: Vec<(String, String)>,
    /// The attributes of the resource that sent it.
    pub resource: HashMap<String, String>,
}

impl ExportedSpan {
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// OTLP's span kinds, as numbered in the protocol.
pub const SERVER: i32 = 2;
pub const CLIENT: i32 = 3;

pub struct OtlpReceiver {
    addr: SocketAddr,
    spans: Arc<Mutex<Vec<ExportedSpan>>>,
    stop: Option<actix_web::dev::ServerHandle>,
}

impl OtlpReceiver {
    pub fn start() -> Self {
        let spans: Arc<Mutex<Vec<ExportedSpan>>> = Arc::default();
        let kept = spans.clone();
        let (addr, handle) = serve(move |app| {
            let kept = kept.clone();
            app.route(
                "/v1/traces",
                web::post().to(move |body: web::Bytes| {
                    let kept = kept.clone();
                    async move { export(&kept, &body) }
                }),
            );
        });
        Self {
            addr,
            spans,
            stop: Some(handle),
        }
    }

    /// The collector's base URL, as `tracing.otlp_endpoint` takes it.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn spans(&self) -> Vec<ExportedSpan> {
        self.spans.lock().clone()
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        if let Some(handle) = self.stop.take() {
            drop(handle.stop(false));
        }
    }
}

fn export(kept: &Mutex<Vec<ExportedSpan>>, body: &[u8]) -> HttpResponse {
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return HttpResponse::BadRequest().finish();
    };
    let mut spans = kept.lock();
    for resource_spans in request.resource_spans {
        let resource = resource_spans
            .resource
            .map(|r| attributes(&r.attributes))
            .unwrap_or_default();
        for span in resource_spans
            .scope_spans
            .into_iter()
            .flat_map(|scope| scope.spans)
        {
            spans.push(ExportedSpan {
                name: span.name,
                kind: span.kind,
                trace_id: hex(&span.trace_id),
                span_id: hex(&span.span_id),
                parent_span_id: hex(&span.parent_span_id),
                attributes: attributes(&span.attributes),
                links: span
                    .links
                    .iter()
                    .map(|l| (hex(&l.trace_id), hex(&l.span_id)))
                    .collect(),
                resource: resource.clone(),
            });
        }
    }
    HttpResponse::Ok()
        .content_type("application/x-protobuf")
        .body(ExportTraceServiceResponse::default().encode_to_vec())
}

fn attributes(values: &[KeyValue]) -> HashMap<String, String> {
    values
        .iter()
        .map(|kv| {
            let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Value::StringValue(s)) => s.clone(),
                Some(Value::IntValue(i)) => i.to_string(),
                Some(Value::BoolValue(b)) => b.to_string(),
                Some(Value::DoubleValue(d)) => d.to_string(),
                Some(other) => format!("{other:?}"),
                None => String::new(),
            };
            (kv.key.clone(), value)
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
