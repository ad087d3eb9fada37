//! This host's wall clock as the runtime reads it: for the attempt log's
//! times and for measuring how long a receiver asked to wait. Nothing
//! compared with the database's now is taken from it (the store adds
//! delays to its own clock), so a host whose clock is off by seconds never
//! retries early. Tests shift it to play such a host.

use chrono::{DateTime, Duration, Utc};

#[derive(Debug, Clone, Copy, Default)]
pub struct WallClock {
    offset: Duration,
}

impl WallClock {
    /// A clock `offset` away from this host's (negative: behind).
    pub fn skewed(offset: Duration) -> Self {
        Self { offset }
    }

    pub fn now(&self) -> DateTime<Utc> {
        Utc::now()
            .checked_add_signed(self.offset)
            .unwrap_or_else(Utc::now)
    }
}
