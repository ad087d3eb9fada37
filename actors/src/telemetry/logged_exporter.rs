//! The exporter, telling the log when exports start failing and when they
//! work again: once each way, not once per batch, so a collector that is
//! down for an hour costs one warning (and the spans), not thousands.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use opentelemetry_sdk::Resource;
use slog::{info, warn};

#[derive(Debug)]
pub struct LoggedExporter<E> {
    inner: E,
    log: slog::Logger,
    failing: AtomicBool,
}

impl<E> LoggedExporter<E> {
    pub fn new(inner: E, log: slog::Logger) -> Self {
        Self {
            inner,
            log,
            failing: AtomicBool::new(false),
        }
    }
}

impl<E: SpanExporter> SpanExporter for LoggedExporter<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len();
        let result = self.inner.export(batch).await;
        let was_failing = self.failing.swap(result.is_err(), Ordering::Relaxed);
        match &result {
            Err(e) if !was_failing => warn!(self.log,
                "spans could not be exported; they are dropped until the collector takes them";
                "error" => %e, "spans" => spans),
            Ok(()) if was_failing => info!(self.log, "spans are exported again"),
            _ => {}
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}
