//! How `remit migrate` waits for the locks a migration takes on a live
//! database. A migration queued for a lock behind a long transaction (a
//! report, a session left idle in one) would queue every claim and finish
//! behind itself; so each try waits about a second at most, gives the lock
//! up, lets the writes through, and tries again, naming the sessions in
//! its way, until `give_up_after`. An index built concurrently blocks no
//! one while it waits for the transactions under way, and waits them out;
//! every `report_every` it names them.

use std::fmt;
use std::time::Duration;

/// How long `remit migrate` keeps trying a migration whose locks are
/// taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockPatience {
    pub give_up_after: Duration,
    /// How often an index build that waits is told of.
    pub report_every: Duration,
}

impl Default for LockPatience {
    fn default() -> Self {
        Self {
            give_up_after: Duration::from_secs(120),
            report_every: Duration::from_secs(5),
        }
    }
}

/// A migration waiting for sessions that hold what it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct LockWait {
    /// The migration's version.
    pub migration: String,
    /// What is likely in the way: the sessions with a transaction open
    /// longer than a try waited, holding locks on remit's tables; for an
    /// index build, the sessions it waits for.
    pub holders: Vec<LockHolder>,
    pub next: AfterWait,
}

/// What the migration does about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterWait {
    /// A try timed out waiting and was rolled back; the next starts in
    /// `pause`.
    TryAgain { tries: u32, pause: Duration },
    /// An index built concurrently has waited `waited` so far, blocking
    /// no one, and goes on waiting.
    KeepWaiting { waited: Duration },
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
        let holders = holders_to_text(&self.holders);
        match self.next {
            AfterWait::TryAgain { tries, pause } => write!(
                f,
                "migration {} waited for a lock (try {tries}), held by {holders}; trying again \
                 in {} s",
                self.migration,
                pause.as_secs()
            ),
            AfterWait::KeepWaiting { waited } => write!(
                f,
                "migration {} builds an index concurrently and has waited {} s for the \
                 transactions of {holders} to end; it blocks no claim or finish meanwhile",
                self.migration,
                waited.as_secs()
            ),
        }
    }
}
