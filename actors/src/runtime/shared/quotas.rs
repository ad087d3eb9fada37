//! Quotas: what receivers announce of their quotas, written to their
//! destinations' rows in batches (one `Rates::learn_quotas` per batch), so
//! every process of the region paces the destination by it. Only a
//! response that carried rate-limit fields costs anything; a delivery
//! never waits for the write, and a lost write is made good by the next
//! response that announces. (What a response announced is read on the
//! send path, `delivery`.)

use remit::store::{Database, QuotaNote, Rates};

use super::batcher::Batcher;

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
