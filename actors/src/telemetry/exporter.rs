//! The tracer every span of a process comes from, and the OTLP exporter
//! behind it. Spans are batched and posted from the batch processor's own
//! thread, never from an actor's, so a slow collector costs delivery
//! nothing; when the queue is full new spans are dropped, not waited for,
//! and a collector that refuses them is logged (`logged_exporter`).

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use remit::domain::Region;

use super::logged_exporter::LoggedExporter;
use crate::config::{Config, ConfigError};

/// How long one export may take before it is given up.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The process's tracer, or none when tracing is off. Cheap to clone;
/// every clone shares one exporter.
#[derive(Clone, Default)]
pub struct Telemetry {
    on: Option<Arc<On>>,
}

struct On {
    tracer: SdkTracer,
    provider: SdkTracerProvider,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("on", &self.on.is_some())
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("tracing.otlp_endpoint: the OTLP exporter could not be made")]
    Exporter(#[source] opentelemetry_otlp::ExporterBuildError),
}

impl Telemetry {
    /// Tracing off: no tracer, no exporter.
    pub fn off() -> Self {
        Self::default()
    }

    /// The configured tracer: off unless `tracing.otlp_endpoint` is set.
    /// Every span names the service (`tracing.service_name`), this
    /// process's lease owner as its instance, and its region.
    pub fn start(
        config: &Config,
        lease_owner: &str,
        log: &slog::Logger,
    ) -> Result<Self, TelemetryError> {
        let Some(url) = config.otlp_traces_url()? else {
            return Ok(Self::off());
        };
        let region: Region = config.region()?;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(url.as_str())
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(TelemetryError::Exporter)?;
        // Named in the log without any credentials it may carry.
        let mut shown = url.clone();
        let _ = shown.set_password(None);
        let _ = shown.set_username("");
        let exporter = LoggedExporter::new(
            exporter,
            log.new(slog::o!("component" => "tracing", "endpoint" => shown.to_string())),
        );
        let resource = Resource::builder()
            .with_service_name(config.tracing.service_name.clone())
            .with_attributes([
                KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
                KeyValue::new("service.instance.id", lease_owner.to_owned()),
                KeyValue::new("remit.region", region.as_str().to_owned()),
            ])
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("remit");
        Ok(Self {
            on: Some(Arc::new(On { tracer, provider })),
        })
    }

    /// The tracer, when tracing is on.
    pub fn tracer(&self) -> Option<&SdkTracer> {
        self.on.as_ref().map(|on| &on.tracer)
    }

    /// Exports every span ended so far and stops the exporter; spans ended
    /// later are dropped. Blocks a thread of its own, not the caller's.
    pub async fn shutdown(&self) -> Result<(), String> {
        let Some(on) = &self.on else {
            return Ok(());
        };
        let provider = on.provider.clone();
        match actix_rt::task::spawn_blocking(move || provider.shutdown()).await {
            Ok(result) => result.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        }
    }
}
