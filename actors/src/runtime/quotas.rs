//! Quotas: what receivers announce of their quotas, written to their
//! destinations' rows in batches (one `Store::learn_quotas` per batch), so
//! every process of the region paces the destination by it. Only a
//! response that carried rate-limit fields costs anything; a delivery
//! never waits for the write, and a lost write is made good by the next
//! response that announces.

use chrono::{DateTime, Utc};
use remit::domain::DestinationId;
use remit::policy::{read_quota, QuotaFields};
use remit::store::{Database, QuotaNote, Store};
use slog::{debug, warn};

use super::batcher::Batcher;
use super::Shared;

pub type Quotas = Batcher<QuotaNote, ()>;

/// Most announcements in one statement.
const BATCH: usize = 256;

/// Writes in flight at once.
const WRITES: usize = 2;

pub fn start(store: Database, log: slog::Logger) -> Quotas {
    Batcher::start(
        "quotas",
        WRITES,
        BATCH,
        log,
        move |notes: Vec<QuotaNote>| {
            let store = store.clone();
            async move {
                store.learn_quotas(&notes).await?;
                Ok(vec![(); notes.len()])
            }
        },
    )
}

/// Reads what one response announced, logs what had to be clamped or
/// could not be read, and hands the quota to be written without waiting
/// for it, with the number of the token its request went out with (which
/// places it among the destination's requests).
pub fn learn(
    shared: &Shared,
    (destination, token, sent_at): (&DestinationId, u64, DateTime<Utc>),
    fields: &QuotaFields,
    received: (DateTime<Utc>, Option<DateTime<Utc>>),
    log: &slog::Logger,
) {
    if fields.is_empty() {
        return;
    }
    let (received_at, server_date) = received;
    let announced = read_quota(
        fields,
        received_at,
        server_date,
        shared.policy.max_server_delay,
    );
    for problem in &announced.problems {
        warn!(log, "the receiver's rate-limit fields were clamped or ignored"; "problem" => problem);
    }
    let Some(quota) = announced.quota else {
        return;
    };
    shared
        .stats
        .metrics
        .quota_announced(destination, quota.remaining);
    let note = QuotaNote {
        destination: destination.clone(),
        quota,
        token,
        sent_at,
    };
    let quotas = shared.quotas.clone();
    let log = log.clone();
    actix_rt::spawn(async move {
        if let Err(e) = quotas.call(note).await {
            debug!(log, "could not record the receiver's quota; the next response will";
                   "error" => %crate::error_chain(&e));
        }
    });
}
