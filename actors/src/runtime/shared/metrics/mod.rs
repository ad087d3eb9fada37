//! What a region's runtime exports on /metrics, through the Prometheus
//! project's client (`prometheus-client`): every series carries the region,
//! and those per destination fold every destination past
//! `metrics.max_destinations` into `other`, so label cardinality stays
//! bounded. No label ever carries a tenant, a reminder or payload bytes.
//!
//! # Layout
//! - `recording`: [`Metrics`], what the runtime records as it goes.
//! - `catalogue`: every family remit exports, registered with its name,
//!   help and buckets, and the known series started at 0.
//! - `labels`: the label sets, and the values known in advance.
//! - `exposition`: the OpenMetrics text, or the Prometheus text format
//!   for scrapers that do not ask for OpenMetrics.
//! - `tests`: the exposition as a scraper reads it.

mod catalogue;
pub mod exposition;
pub(super) mod labels;
mod recording;

pub use recording::Metrics;

#[cfg(test)]
mod tests;
