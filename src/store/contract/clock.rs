//! The one authority for "now" in claims, lease expiry and transitions.
//!
//! In production that is the database's clock, so consumers on hosts with
//! drifting clocks still agree on when a lease has expired. Tests and the
//! simulation pin it instead, and every statement then uses the pinned
//! instant (`coalesce($now, now())` in SQL).

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use parking_lot::Mutex;

#[derive(Debug, Clone, Default)]
pub struct Clock {
    pinned: Option<Arc<Mutex<DateTime<Utc>>>>,
}

impl Clock {
    /// The database server's `now()`.
    pub fn database() -> Self {
        Self::default()
    }

    /// A clock that stands still at `at` until moved.
    pub fn pinned(at: DateTime<Utc>) -> Self {
        Self {
            pinned: Some(Arc::new(Mutex::new(at))),
        }
    }

    /// Moves a pinned clock forward; a database clock ignores it.
    pub fn advance(&self, by: Duration) {
        if let Some(at) = &self.pinned {
            *at.lock() += by;
        }
    }

    /// Sets a pinned clock; a database clock ignores it.
    pub fn set(&self, to: DateTime<Utc>) {
        if let Some(at) = &self.pinned {
            *at.lock() = to;
        }
    }

    /// The instant to bind as `$now`: `None` means the database's clock.
    pub fn now_param(&self) -> Option<DateTime<Utc>> {
        self.pinned.as_ref().map(|at| *at.lock())
    }
}
