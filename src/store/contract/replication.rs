//! What `remit status` says of the database's replication: whether a
//! commit waits for a standby before it returns, so that what remit
//! acknowledges (a schedule, a delivery's mark, a Retry-After's deadline)
//! survives a failover to that standby; and, where the reports read from a
//! replica (`database.read_url`), how far behind it is. PostgreSQL only:
//! an embedded file has no standby.

use chrono::{DateTime, Duration, Utc};

/// The server's replication as it reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replication {
    /// `synchronous_standby_names` (empty: no commit waits for a standby).
    pub synchronous_standby_names: String,
    /// `synchronous_commit` (`local` and `off` never wait for a standby).
    pub synchronous_commit: String,
    /// Whether the server is itself a standby (in recovery).
    pub in_recovery: bool,
    /// The standbys streaming from it, by name.
    pub standbys: Vec<Standby>,
}

/// One standby as `pg_stat_replication` shows it; its states are `None`
/// to a role that may not read them (`pg_monitor` may).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standby {
    /// Its `application_name` (`cluster_name`, or the connection's own).
    pub name: String,
    /// `streaming`, `catchup`, …
    pub state: Option<String>,
    /// `sync`, `quorum`, `potential` or `async`.
    pub sync_state: Option<String>,
}

/// Where the reports were read: a replica (a standby in recovery) and how
/// far its replay is behind, or a primary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSource {
    /// The server's clock when asked.
    pub now: DateTime<Utc>,
    /// Whether it is a standby (in recovery).
    pub standby: bool,
    /// When the last transaction it replayed committed on the primary;
    /// `None` before the first, or on a primary.
    pub replayed_at: Option<DateTime<Utc>>,
    /// Whether it has replayed all it has received from the primary.
    pub caught_up: bool,
    /// Whether an operator paused its replay.
    pub paused: bool,
}

impl ReadSource {
    /// How far behind the primary its reads are: nothing once it has
    /// replayed all it received (an idle primary sends nothing, so the
    /// age of the last replayed commit says nothing then); `None` on a
    /// primary, or before its first replay.
    pub fn lag(&self) -> Option<Duration> {
        if !self.standby {
            return None;
        }
        if self.caught_up && !self.paused {
            return Some(Duration::zero());
        }
        self.replayed_at
            .map(|at| (self.now - at).max(Duration::zero()))
    }

    /// One line for a person.
    pub fn summary(&self) -> String {
        if !self.standby {
            return "read from the read URL, which is a primary (not a replica)".into();
        }
        let paused = if self.paused {
            ", its replay paused"
        } else {
            ""
        };
        match self.lag() {
            Some(lag) if lag.is_zero() => format!("read from a replica, caught up{paused}"),
            Some(lag) => format!(
                "read from a replica, {:.1} s behind the primary{paused}",
                lag.num_milliseconds() as f64 / 1000.0
            ),
            None => format!("read from a replica that has replayed nothing yet{paused}"),
        }
    }
}

impl Replication {
    /// The standbys a commit waits for now.
    pub fn synchronous(&self) -> Vec<&Standby> {
        let waits = !matches!(self.synchronous_commit.as_str(), "local" | "off");
        self.standbys
            .iter()
            .filter(|s| waits && matches!(s.sync_state.as_deref(), Some("sync" | "quorum")))
            .collect()
    }

    /// One line for a person: whether an acknowledged commit is on a
    /// standby too, and what follows from it.
    pub fn summary(&self) -> String {
        if self.in_recovery {
            return "this server is a standby (read only): remit needs the primary".into();
        }
        let synchronous = self.synchronous();
        if !synchronous.is_empty() {
            let names: Vec<&str> = synchronous.iter().map(|s| s.name.as_str()).collect();
            return format!(
                "synchronous standby: {} (a commit returns once it has it: a failover to it keeps \
                 everything remit acknowledged)",
                names.join(", ")
            );
        }
        if !self.synchronous_standby_names.is_empty()
            && !matches!(self.synchronous_commit.as_str(), "local" | "off")
        {
            return format!(
                "synchronous_standby_names is '{}' but no such standby is connected: every commit \
                 waits for one",
                self.synchronous_standby_names
            );
        }
        match self.standbys.len() {
            0 => "no standby: a lost server loses what was not in its last backup".into(),
            n => format!(
                "{n} asynchronous standby(s), none synchronous: a failover may lose what was \
                 acknowledged in the moments before it"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standby(sync_state: &str) -> Standby {
        Standby {
            name: "standby1".into(),
            state: Some("streaming".into()),
            sync_state: Some(sync_state.into()),
        }
    }

    fn replication(names: &str, commit: &str, standbys: Vec<Standby>) -> Replication {
        Replication {
            synchronous_standby_names: names.into(),
            synchronous_commit: commit.into(),
            in_recovery: false,
            standbys,
        }
    }

    #[test]
    fn a_replica_is_behind_by_its_last_replay_unless_caught_up() {
        let now = DateTime::parse_from_rfc3339("2026-12-24T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let source = |standby, caught_up, paused| ReadSource {
            now,
            standby,
            replayed_at: Some(now - Duration::seconds(42)),
            caught_up,
            paused,
        };
        assert_eq!(source(true, true, false).lag(), Some(Duration::zero()));
        assert_eq!(
            source(true, false, false).lag(),
            Some(Duration::seconds(42))
        );
        assert_eq!(
            source(true, true, true).lag(),
            Some(Duration::seconds(42)),
            "paused: what it has not replayed may be anything"
        );
        assert_eq!(source(false, true, false).lag(), None);
        assert!(source(true, false, true)
            .summary()
            .contains("42.0 s behind"));
        assert!(source(false, true, false).summary().contains("a primary"));
    }

    #[test]
    fn a_commit_waits_only_for_a_sync_standby_under_a_waiting_commit_level() {
        let sync = replication("standby1", "on", vec![standby("sync")]);
        assert_eq!(sync.synchronous().len(), 1);
        assert!(sync.summary().starts_with("synchronous standby: standby1"));
        let local = replication("standby1", "local", vec![standby("sync")]);
        assert!(local.synchronous().is_empty(), "local never waits");
        let async_only = replication("", "on", vec![standby("async")]);
        assert!(async_only.summary().contains("may lose"));
        let missing = replication("standby1", "on", Vec::new());
        assert!(missing.summary().contains("every commit waits"));
        assert!(replication("", "on", Vec::new())
            .summary()
            .starts_with("no standby"));
    }
}
