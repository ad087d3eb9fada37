//! Works a region's bulk replays (replay jobs) to the end, batch by batch,
//! in whichever process serves the region (`remit run`, `remit console`).

use remit::domain::Region;
use remit::store::Database;

/// Starts working the region's unfinished replay jobs; stops when the
/// handle is aborted or the actix system stops.
pub fn spawn(store: Database, region: Region, log: slog::Logger) -> actix_rt::task::JoinHandle<()> {
    let _ = (store, region, log);
    todo!("replay_jobs::spawn")
}
