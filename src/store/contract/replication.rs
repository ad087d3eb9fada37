//! What `remit status` says of the database's replication: whether a
//! commit waits for a standby before it returns, so that what remit
//! acknowledges (a schedule, a delivery's mark, a Retry-After's deadline)
//! survives a failover to that standby. PostgreSQL only: an embedded file
//! has no standby.

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
