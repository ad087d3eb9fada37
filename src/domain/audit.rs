//! The audit log: one entry for every admin action, written by the store in
//! the same transaction as the action itself, so an action never commits
//! without its entry and a rolled-back one leaves none. Entries are only
//! ever appended (and deleted by retention).
//!
//! An entry says who acted ([`Actor`]), what they did ([`AuditAction`], a
//! closed list of stable dotted names), to what ([`AuditTarget`]), in which
//! region, and the settings before and after as JSON. Settings never hold a
//! secret's value: a destination says `has_signing_secret`, a rotation the
//! new secret's id and expiry, a token its id, name and scope, never the
//! token (`audit_settings` builds them).

use chrono::{DateTime, Utc};

use super::ids::InvalidInput;
use super::ids::Region;

/// Who acted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// A stored API token, by its id and its name (if it has one).
    Token { id: String, name: Option<String> },
    /// The configured bootstrap token (`api.token`).
    Bootstrap,
    /// The `remit` command line, which talks to the database directly, run
    /// by this operating-system user.
    Cli { user: String },
    /// remit itself: a handle no one is acting through.
    System,
}

impl Actor {
    /// The actor's kind, as stored and shown: `token`, `bootstrap`, `cli`
    /// or `system`.
    pub fn kind(&self) -> &'static str {
        match self {
            Actor::Token { .. } => "token",
            Actor::Bootstrap => "bootstrap",
            Actor::Cli { .. } => "cli",
            Actor::System => "system",
        }
    }

    /// The token's id or the user's name; `None` for bootstrap and system.
    pub fn id(&self) -> Option<&str> {
        match self {
            Actor::Token { id, .. } => Some(id),
            Actor::Cli { user } => Some(user),
            Actor::Bootstrap | Actor::System => None,
        }
    }

    /// The token's name, when it has one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Actor::Token { name, .. } => name.as_deref(),
            _ => None,
        }
    }

    /// The actor from its stored columns; `None` for a kind this build does
    /// not know, or a token or user without an id.
    pub fn from_columns(kind: &str, id: Option<String>, name: Option<String>) -> Option<Self> {
        match (kind, id) {
            ("token", Some(id)) => Some(Actor::Token { id, name }),
            ("bootstrap", _) => Some(Actor::Bootstrap),
            ("cli", Some(user)) => Some(Actor::Cli { user }),
            ("system", _) => Some(Actor::System),
            _ => None,
        }
    }

    /// Whether a filter on `who` finds this actor: its id (a token's id, a
    /// user's name) or its kind (`bootstrap`, `cli`, `system`, `token`).
    pub fn matches(&self, who: &str) -> bool {
        self.id() == Some(who) || self.kind() == who
    }
}

macro_rules! actions {
    ($($variant:ident => $name:literal,)*) => {
        /// What an admin did. Each name is stable: receivers of exports,
        /// filters and dashboards key on it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum AuditAction {
            $($variant,)*
        }

        impl AuditAction {
            /// Every action, in the order the docs list them.
            pub const ALL: &'static [AuditAction] = &[$(AuditAction::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(AuditAction::$variant => $name,)*
                }
            }

            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($name => Some(AuditAction::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

actions! {
    TokenCreate => "token.create",
    TokenRevoke => "token.revoke",
    DestinationCreate => "destination.create",
    DestinationUpdate => "destination.update",
    DestinationDelete => "destination.delete",
    DestinationDisable => "destination.disable",
    DestinationEnable => "destination.enable",
    DestinationRotateSecret => "destination.rotate_secret",
    DestinationRetryNow => "destination.retry_now",
    TaskReplay => "task.replay",
    TaskCancel => "task.cancel",
    TaskReschedule => "task.reschedule",
    TaskErase => "task.erase",
    ReplayJobCreate => "replay_job.create",
    CancelJobCreate => "cancel_job.create",
    TenantErase => "tenant.erase",
    Import => "import",
    Rekey => "rekey",
    AuditPrune => "audit.prune",
}

impl std::fmt::Display for AuditAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an action was done to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetKind {
    Token,
    Destination,
    Task,
    Tenant,
    /// A bulk replay or cancel job.
    Job,
    /// What an import brought: `destinations` or `tasks`.
    Import,
    /// A payload key, by its fingerprint (a rekey).
    PayloadKey,
    /// The audit log itself (its retention), by the entries a prune took:
    /// a region's, those of no region (`shared`), or every one (`all`).
    AuditLog,
}

impl TargetKind {
    pub const ALL: &'static [TargetKind] = &[
        TargetKind::Token,
        TargetKind::Destination,
        TargetKind::Task,
        TargetKind::Tenant,
        TargetKind::Job,
        TargetKind::Import,
        TargetKind::PayloadKey,
        TargetKind::AuditLog,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Token => "token",
            TargetKind::Destination => "destination",
            TargetKind::Task => "task",
            TargetKind::Tenant => "tenant",
            TargetKind::Job => "job",
            TargetKind::Import => "import",
            TargetKind::PayloadKey => "payload_key",
            TargetKind::AuditLog => "audit_log",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.as_str() == text)
    }
}

/// The thing an action was done to: its kind and id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditTarget {
    pub kind: TargetKind,
    pub id: String,
}

impl AuditTarget {
    pub fn new(kind: TargetKind, id: impl Into<String>) -> Self {
        Self {
            kind,
            id: id.into(),
        }
    }
}

/// An entry the store is about to write: who acts and when come from the
/// store handle and its clock.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAuditEntry {
    pub action: AuditAction,
    pub target: AuditTarget,
    /// The region the action applies in; `None` for what every region
    /// shares (tokens, keys, an import).
    pub region: Option<Region>,
    /// The settings before, when the target existed; never a secret value.
    pub before: Option<serde_json::Value>,
    /// The settings after; never a secret value.
    pub after: Option<serde_json::Value>,
}

impl NewAuditEntry {
    pub fn new(action: AuditAction, target: AuditTarget) -> Self {
        Self {
            action,
            target,
            region: None,
            before: None,
            after: None,
        }
    }

    pub fn region(mut self, region: Region) -> Self {
        self.region = Some(region);
        self
    }

    pub fn before(mut self, before: serde_json::Value) -> Self {
        self.before = Some(before);
        self
    }

    pub fn after(mut self, after: serde_json::Value) -> Self {
        self.after = Some(after);
        self
    }
}

/// A written entry.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEntry {
    /// Increases with every entry written; the cursor pages by it.
    pub id: i64,
    /// The store's now when the action's transaction ran.
    pub at: DateTime<Utc>,
    pub actor: Actor,
    pub action: AuditAction,
    pub target: AuditTarget,
    pub region: Option<Region>,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
}

/// Which entries to list; every field narrows, none lists all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    pub action: Option<AuditAction>,
    pub target_kind: Option<TargetKind>,
    pub target_id: Option<String>,
    /// An actor's id (token id, user name) or kind (`bootstrap`, `cli`, …).
    pub actor: Option<String>,
    /// At or after.
    pub since: Option<DateTime<Utc>>,
    /// Before.
    pub until: Option<DateTime<Utc>>,
}

impl AuditFilter {
    /// Whether `entry` passes every field (the model's reading; the SQL
    /// stores say the same in their WHERE).
    pub fn admits(&self, entry: &AuditEntry) -> bool {
        self.action.is_none_or(|a| a == entry.action)
            && self.target_kind.is_none_or(|k| k == entry.target.kind)
            && self
                .target_id
                .as_ref()
                .is_none_or(|id| *id == entry.target.id)
            && self
                .actor
                .as_ref()
                .is_none_or(|who| entry.actor.matches(who))
            && self.since.is_none_or(|t| entry.at >= t)
            && self.until.is_none_or(|t| entry.at < t)
    }

    /// Parses the action's and the target kind's names, naming the field
    /// and what it accepts.
    pub fn parse_action(text: &str) -> Result<AuditAction, InvalidInput> {
        AuditAction::parse(text).ok_or_else(|| {
            let names: Vec<&str> = AuditAction::ALL.iter().map(|a| a.as_str()).collect();
            InvalidInput::new("action", format!("must be one of {}", names.join(", ")))
        })
    }

    /// A target's id or an actor to look for, as given: at most 200 bytes,
    /// without control characters (no id or name remit writes has one).
    pub fn parse_text(field: &'static str, text: &str) -> Result<String, InvalidInput> {
        if text.len() > 200 || text.chars().any(char::is_control) {
            return Err(InvalidInput::new(
                field,
                "must be at most 200 bytes, without control characters",
            ));
        }
        Ok(text.to_owned())
    }

    pub fn parse_target_kind(text: &str) -> Result<TargetKind, InvalidInput> {
        TargetKind::parse(text).ok_or_else(|| {
            let names: Vec<&str> = TargetKind::ALL.iter().map(|k| k.as_str()).collect();
            InvalidInput::new(
                "target_kind",
                format!("must be one of {}", names.join(", ")),
            )
        })
    }
}

/// One page of entries, newest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditPage {
    pub entries: Vec<AuditEntry>,
    /// The cursor of the next (older) page: pass it as `before`. `None`
    /// when this page is the last.
    pub next: Option<i64>,
}

impl AuditPage {
    /// The page of `limit` from `rows`, which hold up to `limit + 1`
    /// entries newest first: one more than asked says another page follows.
    pub fn of(mut rows: Vec<AuditEntry>, limit: u32) -> Self {
        let limit = limit as usize;
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next = if more {
            rows.last().map(|e| e.id)
        } else {
            None
        };
        Self {
            entries: rows,
            next,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_and_kind_reads_back_from_its_name() {
        for action in AuditAction::ALL {
            assert_eq!(AuditAction::parse(action.as_str()), Some(*action));
        }
        for kind in TargetKind::ALL {
            assert_eq!(TargetKind::parse(kind.as_str()), Some(*kind));
        }
        assert_eq!(AuditAction::parse("destination.explode"), None);
        let refused = AuditFilter::parse_action("nope").unwrap_err();
        assert_eq!(refused.field, "action");
        assert!(
            refused.reason.contains("token.create"),
            "{}",
            refused.reason
        );
        assert_eq!(
            AuditFilter::parse_text("actor", "a\u{0}b")
                .unwrap_err()
                .field,
            "actor"
        );
        assert!(AuditFilter::parse_text("actor", &"x".repeat(201)).is_err());
        assert_eq!(AuditFilter::parse_text("target_id", "crm").unwrap(), "crm");
    }

    #[test]
    fn an_actor_is_found_by_its_id_or_its_kind() {
        let token = Actor::Token {
            id: "tok_1".into(),
            name: Some("ci".into()),
        };
        assert!(token.matches("tok_1") && token.matches("token") && !token.matches("ci"));
        assert!(Actor::Bootstrap.matches("bootstrap"));
        let cli = Actor::Cli {
            user: "alice".into(),
        };
        assert!(cli.matches("alice") && cli.matches("cli"));
        for actor in [token, Actor::Bootstrap, cli, Actor::System] {
            let back = Actor::from_columns(
                actor.kind(),
                actor.id().map(str::to_owned),
                actor.name().map(str::to_owned),
            );
            assert_eq!(back, Some(actor));
        }
        assert_eq!(Actor::from_columns("token", None, None), None);
    }
}
