//! Token takes for every throttle of the process in one statement: each
//! throttle asks for its destination's tokens and waits for its answer,
//! and asks that arrive together share one round trip to the buckets.

use remit::store::{Database, RateGrant, RateRequest, Rates};

use super::batcher::Batcher;

/// Answers `None` for a destination that no longer exists.
pub type Buckets = Batcher<RateRequest, Option<RateGrant>>;

/// Most asks in one statement.
const BATCH: usize = 512;

/// Takes in flight at once.
const TAKES: usize = 2;

pub fn start(store: Database, log: slog::Logger) -> Buckets {
    Batcher::start(
        "buckets",
        TAKES,
        BATCH,
        log,
        move |asks: Vec<RateRequest>| {
            let store = store.clone();
            async move { store.take_tokens_many(&asks).await }
        },
    )
}
