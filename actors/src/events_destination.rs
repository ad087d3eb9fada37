//! The destination every region's operational events are sent to, named
//! from the configuration alone: the configuration checks the name when it
//! is read, and the event relay registers it.

use remit::domain::{DestinationId, Region};
use sha2::{Digest, Sha256};

/// The tenant the events webhooks are scheduled under.
pub const EVENTS_TENANT: &str = "remit";

/// How every events destination's id starts: the alert check never
/// reports on these (an event about the events receiver's trouble could
/// only go through it).
pub const EVENTS_DESTINATION_PREFIX: &str = "remit-events-";

/// The events destination of `region`: `remit-events-<region>-<hash>`,
/// the hash from its URL and secret, so a changed setting registers a new
/// destination rather than conflicting with the old one (whose waiting
/// events still go where they were meant to).
///
/// The region is part of the id because a destination belongs to one
/// region and ids are global: regions sharing a database and an events
/// receiver each need their own. (A region name is at most 32 characters
/// of `a-z0-9-`, and the hash is always the last 12, so two regions'
/// ids never meet.)
///
/// Databases from before the region was in the id hold one
/// `remit-events-<hash>` registered for whichever region came first. It
/// is left as it is, and harmless: no new event is scheduled for it, the
/// events already scheduled for it still go out (they are tasks of that
/// region, which its processes claim like any other, and it is never
/// disabled), and an event turned again after an upgrade (a crash between
/// scheduling and forgetting it) finds its webhook under the old id by
/// its key and counts as on its way (see `turn`).
pub fn events_destination_id(
    region: Region,
    url: &str,
    secret: Option<&str>,
) -> Result<DestinationId, remit::domain::InvalidInput> {
    let mut hash = Sha256::new();
    hash.update(url.as_bytes());
    hash.update([0]);
    hash.update(secret.unwrap_or("").as_bytes());
    let digest = hash.finalize();
    let short = remit::payload_crypto::hex(&digest[..6]);
    DestinationId::new(&format!(
        "{EVENTS_DESTINATION_PREFIX}{}-{short}",
        region.as_str()
    ))
}
