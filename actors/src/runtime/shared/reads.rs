//! Destination reads for every sender of the process in one statement:
//! each delivery that has no trusted copy of its destination asks for the
//! row right before its request, and asks that arrive together share one
//! round trip. With a task or two per destination, a read per delivery
//! would otherwise cost as much as everything else a delivery does.

use remit::domain::{DestinationId, SendTarget};
use remit::store::{Database, Destinations};

use super::batcher::Batcher;

/// Answers `None` for a destination that no longer exists.
pub type Reads = Batcher<DestinationId, Option<SendTarget>>;

/// Most destinations in one statement.
const BATCH: usize = 512;

/// Reads in flight at once.
const READS: usize = 2;

pub fn start(store: Database, log: slog::Logger) -> Reads {
    Batcher::start(
        "destination-reads",
        READS,
        BATCH,
        log,
        move |ids: Vec<DestinationId>| {
            let store = store.clone();
            async move { store.send_targets(&ids).await }
        },
    )
}
