//! Committing a delivery's decision: the finish, tried again while the
//! lease lasts (at most a few leases in all), with a heartbeat that
//! extends the lease while a slow write is under way, so the outcome of a
//! request that went out is never dropped for want of a lease.

use remit::store::{Finish, Leases, TransitionOutcome};
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use remit::domain::{DestinationId, Lease};
use remit::policy::Decision;
use slog::{info, warn};

use super::super::shared::batcher::BatchError;
use super::super::shared::Shared;

/// Commits the decision, retrying a failed write while the lease lasts
/// (and at most a few leases in all, since the heartbeat keeps extending
/// it) and extending the lease while a slow write is under way.
pub(in crate::runtime) async fn finish(
    shared: &Shared,
    destination: &DestinationId,
    lease: &Lease,
    decision: &Decision,
    lease_ends: &Rc<Cell<Instant>>,
    log: &slog::Logger,
) -> Result<TransitionOutcome, BatchError> {
    let give_up = Instant::now() + shared.lease() * 3;
    let commit = async {
        let mut wait = Duration::from_millis(50);
        loop {
            let one = Finish {
                lease: lease.clone(),
                destination: destination.clone(),
                decision: decision.clone(),
            };
            match shared.finisher.call(one).await {
                Ok(outcome) => return Ok(outcome),
                Err(e)
                    if lease_ends.get().saturating_duration_since(Instant::now()) > wait
                        && Instant::now() + wait < give_up =>
                {
                    warn!(log, "could not record the outcome; trying again";
                          "error" => %remit::error_chain(&e));
                    actix_rt::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(1));
                }
                Err(e) => return Err(e),
            }
        }
    };
    tokio::select! {
        result = commit => result,
        never = heartbeat(shared, lease, lease_ends, log) => match never {},
    }
}

/// Keeps the lease ahead of a finish that is taking long: shortly before
/// it would end, extends it by a whole lease. Runs until dropped.
async fn heartbeat(
    shared: &Shared,
    lease: &Lease,
    lease_ends: &Rc<Cell<Instant>>,
    log: &slog::Logger,
) -> std::convert::Infallible {
    let margin = shared.finish_margin() / 2;
    let by = chrono::Duration::from_std(shared.lease()).unwrap_or(chrono::Duration::MAX);
    loop {
        let wake = lease_ends
            .get()
            .checked_sub(margin)
            .unwrap_or_else(Instant::now);
        actix_rt::time::sleep_until(wake.into()).await;
        let asked = Instant::now();
        match shared.store.extend_lease(lease, by).await {
            Ok(TransitionOutcome::Applied) => {
                info!(log, "finish is slow; lease extended");
                lease_ends.set(asked + shared.lease());
            }
            // The lease moved on; the finish will be told it is fenced.
            Ok(_) => std::future::pending::<()>().await,
            Err(e) => {
                warn!(log, "could not extend the lease"; "error" => %remit::error_chain(&e));
                actix_rt::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}
