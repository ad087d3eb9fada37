//! How `remit migrate` waits for the locks a migration takes on a live
//! database. A migration queued for a lock behind a long transaction (a
//! report, a session left idle in one) would queue every claim and finish
//! behind itself; so each try waits about a second at most, gives the lock
//! up, lets the writes through, and tries again, naming the sessions in
//! its way, until `give_up_after`.

use std::fmt;
use std::time::Duration;

/// How long `remit migrate` keeps trying a migration whose locks are
/// taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockPatience {
    pub give_up_after: Duration,
}

impl Default for LockPatience {
    fn default() -> Self {
        Self {
            give_up_after: Duration::from_secs(120),
        }
    }
}

/// One try of a migration that timed out waiting for a lock, rolled back.
#[derive(Debug, Clone, PartialEq)]
pub struct LockWait {
    /// The migration's version.
    pub migration: String,
    /// Tries so far, this one included.
    pub tries: u32,
    /// The sessions with a transaction open longer than the try waited,
    /// holding locks in this database: what is likely in the way.
    pub holders: Vec<LockHolder>,
    /// When the next try starts.
    pub next_try_in: Duration,
}

/// A session holding locks, as PostgreSQL shows it. Never its query: an
/// application's query text may carry the data it handles.
#[derive(Debug, Clone, PartialEq)]
pub struct LockHolder {
    pub pid: i32,
    /// The role it is logged in as.
    pub role: String,
    pub application: String,
    /// `active`, `idle in transaction`, …; `None` when the migrating role
    /// may not see it (another role's session, without
    /// `pg_read_all_stats`).
    pub state: Option<String>,
    /// How long its transaction has been open; `None` as `state`.
    pub open_for: Option<Duration>,
}

impl fmt::Display for LockHolder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pid {} (role {:?}", self.pid, self.role)?;
        if !self.application.is_empty() {
            write!(f, ", {:?}", self.application)?;
        }
        match (&self.state, self.open_for) {
            (Some(state), Some(open)) => {
                write!(f, ", {state}, transaction open {} s)", open.as_secs())
            }
            _ => write!(
                f,
                ", its state hidden from this role: pg_read_all_stats shows it)"
            ),
        }
    }
}

/// The holders, for a message: "pid 1 (…), pid 2 (…)", or a note that
/// none was seen (the lock was let go before they were looked for).
pub fn holders_to_text(holders: &[LockHolder]) -> String {
    if holders.is_empty() {
        return "no session holding a lock on remit's tables when looked for".into();
    }
    holders
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for LockWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "migration {} waited for a lock (try {}), held by {}; trying again in {} s",
            self.migration,
            self.tries,
            holders_to_text(&self.holders),
            self.next_try_in.as_secs()
        )
    }
}
