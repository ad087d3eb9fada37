//! The Finisher: the outcomes of many deliveries committed together, one
//! `Store::finish_many` per batch. A delivery is answered only after the
//! commit, so nothing is acknowledged (its slot freed, its throttle told)
//! before its next state is durable; when a commit fails, each delivery
//! retries on its own while its lease lasts.

use remit::store::{Database, Finish, Store, TransitionOutcome};

use super::batcher::Batcher;

pub type Finisher = Batcher<Finish, TransitionOutcome>;

/// Most finishes in one commit.
const BATCH: usize = 256;

/// Commits in flight at once, so a batch can gather and go while earlier
/// ones wait for their flush to disk.
const COMMITS: usize = 4;

pub fn start(store: Database, log: slog::Logger) -> Finisher {
    Batcher::start(
        "finisher",
        COMMITS,
        BATCH,
        log,
        move |batch: Vec<Finish>| {
            let store = store.clone();
            async move { store.finish_many(&batch).await }
        },
    )
}
