//! The label sets of remit's metrics, and the label values known in
//! advance, which are exported at 0 from the start so an alert sees 0
//! rather than an absent series.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use remit::domain::AttemptOutcome;

/// Creates each series of `labels` at its zero value.
pub(in crate::runtime) fn start_at_zero<L, M, C>(
    family: &Family<L, M, C>,
    labels: impl IntoIterator<Item = L>,
) where
    L: Clone + std::hash::Hash + Eq,
    C: MetricConstructor<M>,
{
    for label in labels {
        drop(family.get_or_create(&label));
    }
}

/// Every attempt outcome, each exported at 0 for a destination as soon as
/// it has a label.
pub(in crate::runtime) const OUTCOMES: [AttemptOutcome; 5] = [
    AttemptOutcome::Delivered,
    AttemptOutcome::RetryWait,
    AttemptOutcome::Failed,
    AttemptOutcome::Fenced,
    AttemptOutcome::Abandoned,
];

/// Response classes, exported at 0 from the start.
pub(in crate::runtime) const CLASSES: [&str; 6] = ["1xx", "2xx", "3xx", "4xx", "5xx", "transport"];

/// The failure reasons known in advance (`http_<status>` and
/// `redirect_<status>` appear with their first failure), exported at 0
/// from the start.
pub(in crate::runtime) const REASONS: [&str; 5] = [
    "retry_horizon",
    "max_attempts",
    "blocked_address",
    "destination_disabled",
    "payload_unreadable",
];

/// The kinds of actor a supervisor restarts, exported at 0 from the start.
pub(in crate::runtime) const ACTORS: [&str; 6] = [
    "claimer",
    "sender",
    "reconciler",
    "pruner",
    "event_relay",
    "alerter",
];

/// The live states the queue gauges count.
pub(in crate::runtime) const STATES: [&str; 3] = ["pending", "leased", "retry_wait"];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(in crate::runtime) struct ByOutcome {
    pub destination: String,
    pub outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(in crate::runtime) struct ByDestination {
    pub destination: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(in crate::runtime) struct ByClass {
    pub class: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(in crate::runtime) struct ByReason {
    pub reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(in crate::runtime) struct ByActor {
    pub actor: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(in crate::runtime) struct ByState {
    pub state: String,
}
