//! The cases every store must pass, in a file per area. Only the store
//! traits are used here.

use chrono::Duration;
use remit::domain::{
    AttemptOutcome, AttemptRecord, DestinationId, FailureReason, NewDestination, Payload,
    ReconcileRequest, Region, TaskId, TaskState,
};
use remit::store::{
    Destinations, Leases, RateGrant, RateRequest, Replayed, Schedule, Store, StoreError,
    TransitionOutcome,
};

use super::Harness;
use crate::support::{claim, delivered, new_task, retry_at, t0};

async fn destination<H: Harness>(h: &H, id: &str, region: Region) -> DestinationId {
    let id = DestinationId::new(id).unwrap();
    let new = NewDestination::new(id.clone(), region, "http://127.0.0.1:9/", None).unwrap();
    h.store().add_destination(new).await.unwrap();
    id
}

async fn task<H: Harness>(h: &H, reminder: &str, d: &DestinationId, region: Region) -> TaskId {
    h.store()
        .schedule(new_task(reminder, d, region))
        .await
        .unwrap()
        .task
        .id
}

/// A grant of `tokens`, numbered up to `last`.
fn granted(tokens: u32, last: u64) -> RateGrant {
    RateGrant::Granted { tokens, last }
}

fn record(status: u16) -> AttemptRecord {
    AttemptRecord {
        http_status: Some(status),
        ..AttemptRecord::default()
    }
}

async fn claim_one<H: Harness>(h: &H) -> remit::domain::ClaimedTask {
    h.clock().advance(Duration::hours(1));
    let mut claimed = h
        .store()
        .claim_due(&claim(Region::US, "c", 1))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1, "one task due");
    claimed.remove(0)
}

mod alerts;
mod api_tokens;
mod audit_log;
mod audit_refusals;
mod cancel_jobs;
mod change_races;
mod change_refusals;
mod changes;
mod claims;
mod destination_alerts;
mod destination_deletion;
mod destination_settings;
mod destination_stats;
mod destinations;
mod disabled_tasks;
mod erasure;
mod finishes;
mod health;
mod key_ring;
mod next_due;
mod ordering;
mod quotas;
mod reads;
mod reconcile;
mod replay;
mod replay_jobs;
mod report_counts;
mod report_search;
mod reports;
mod retention;
mod scheduling;
mod secrets;
mod trace_parents;
mod transfer;
mod transitions;

pub use alerts::*;
pub use api_tokens::*;
pub use audit_log::*;
pub use audit_refusals::*;
pub use cancel_jobs::*;
pub use change_races::*;
pub use change_refusals::*;
pub use changes::*;
pub use claims::*;
pub use destination_alerts::*;
pub use destination_deletion::*;
pub use destination_settings::*;
pub use destination_stats::*;
pub use destinations::*;
pub use disabled_tasks::*;
pub use erasure::*;
pub use finishes::*;
pub use health::*;
pub use key_ring::*;
pub use next_due::*;
pub use ordering::*;
pub use quotas::*;
pub use reads::*;
pub use reconcile::*;
pub use replay::*;
pub use replay_jobs::*;
pub use report_counts::*;
pub use report_search::*;
pub use reports::*;
pub use retention::*;
pub use scheduling::*;
pub use secrets::*;
pub use trace_parents::*;
pub use transfer::*;
pub use transitions::*;
