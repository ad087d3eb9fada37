//! API tokens: who may call the HTTP API, and what each may do there.
//!
//! A token is `remit_` followed by 43 characters of unpadded URL-safe
//! base64 (32 random bytes). It is shown once, when it is made; the store
//! keeps only its SHA-256 hash. A plain hash, not a slow password hash, is
//! enough here: the token is 256 random bits, not something a person chose,
//! so nobody can try candidates against a leaked hash any faster than
//! against the API itself, and one hash per request costs nothing.

use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::ids::quoted;
use super::ids::InvalidInput;
use super::ids::TenantId;

/// What every token starts with, so a leaked one is recognisable (secret
/// scanners, logs a person reads).
pub const TOKEN_PREFIX: &str = "remit_";

/// What a token may do; a route declares which scopes it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Read-only: tasks, destinations.
    Read,
    /// Schedule tasks, and read the tasks it may see.
    Schedule,
    /// Everything: destinations, replay, tokens.
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Schedule, Scope::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Schedule => "schedule",
            Scope::Admin => "admin",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = InvalidInput;

    fn from_str(s: &str) -> Result<Self, InvalidInput> {
        Scope::ALL
            .into_iter()
            .find(|scope| scope.as_str() == s)
            .ok_or_else(|| {
                InvalidInput::new(
                    "scope",
                    format!("must be read, schedule or admin, not {}", quoted(s)),
                )
            })
    }
}

/// A token's public id: `tok_` and 16 lowercase hex digits. It names the
/// token in lists, logs and revocations, and is no secret.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TokenId(String);

impl TokenId {
    fn random() -> Self {
        let bytes: [u8; 8] = rand::random();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Self(format!("tok_{hex}"))
    }

    pub fn new(value: &str) -> Result<Self, InvalidInput> {
        let hex = value.strip_prefix("tok_").unwrap_or("");
        if hex.len() == 16 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            Ok(Self(value.to_owned()))
        } else {
            Err(InvalidInput::new(
                "id",
                format!(
                    "must be a token id, tok_ and 16 lowercase hex digits, not {}",
                    quoted(value)
                ),
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TokenId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The SHA-256 of a token: all the store keeps of it.
pub type TokenHash = [u8; 32];

/// The hash a token is stored and looked up by.
pub fn token_hash(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

/// Longest token name accepted.
const MAX_NAME_LEN: usize = 200;

/// A token as stored: never its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiToken {
    pub id: TokenId,
    pub name: Option<String>,
    pub scope: Scope,
    /// The only tenants whose tasks it may schedule and read; `None` for
    /// every tenant.
    pub tenants: Option<Vec<TenantId>>,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

impl ApiToken {
    /// Whether it may be used at `now`: not revoked, not expired.
    pub fn usable_at(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|at| now < at)
    }

    /// Whether it may see `tenant`'s tasks.
    pub fn sees_tenant(&self, tenant: &TenantId) -> bool {
        self.tenants
            .as_ref()
            .is_none_or(|tenants| tenants.contains(tenant))
    }
}

/// A token to store, made by [`NewApiToken::generate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApiToken {
    pub id: TokenId,
    pub hash: TokenHash,
    pub name: Option<String>,
    pub scope: Scope,
    pub tenants: Option<Vec<TenantId>>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// What a person asked for, checked by [`TokenGrant::check`].
#[derive(Debug, Clone, Default)]
pub struct TokenGrant {
    pub scope: String,
    pub tenants: Vec<String>,
    pub expires_at: Option<DateTime<Utc>>,
    pub name: Option<String>,
}

impl TokenGrant {
    /// Checks the request at `now` and makes the token: the row to store
    /// and the secret to show once. An admin token cannot be limited to
    /// tenants (it manages what all tenants share); an expiry must be
    /// after `now`.
    pub fn check(self, now: DateTime<Utc>) -> Result<(NewApiToken, String), InvalidInput> {
        let scope: Scope = self.scope.parse()?;
        let mut tenants = Vec::with_capacity(self.tenants.len());
        for tenant in &self.tenants {
            let tenant =
                TenantId::new(tenant).map_err(|e| InvalidInput::new("tenants", e.reason))?;
            if !tenants.contains(&tenant) {
                tenants.push(tenant);
            }
        }
        if scope == Scope::Admin && !tenants.is_empty() {
            return Err(InvalidInput::new(
                "tenants",
                "an admin token cannot be limited to tenants; use read or schedule",
            ));
        }
        if let Some(at) = self.expires_at {
            if at <= now {
                return Err(InvalidInput::new("expires_at", "must be in the future"));
            }
        }
        if let Some(name) = &self.name {
            if name.len() > MAX_NAME_LEN || name.chars().any(char::is_control) {
                return Err(InvalidInput::new(
                    "name",
                    format!("must be at most {MAX_NAME_LEN} bytes, without control characters"),
                ));
            }
        }
        let secret: [u8; 32] = rand::random();
        let token = format!(
            "{TOKEN_PREFIX}{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret)
        );
        let new = NewApiToken {
            id: TokenId::random(),
            hash: token_hash(&token),
            name: self.name,
            scope,
            tenants: (!tenants.is_empty()).then_some(tenants),
            expires_at: self.expires_at,
        };
        Ok((new, token))
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone, Utc};

    use super::{token_hash, Scope, TokenGrant, TokenId, TOKEN_PREFIX};

    fn now() -> chrono::DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 0).unwrap()
    }

    #[test]
    fn a_grant_makes_a_prefixed_token_stored_as_its_hash() {
        let grant = TokenGrant {
            scope: "schedule".into(),
            tenants: vec!["a".into(), "a".into(), "b".into()],
            ..TokenGrant::default()
        };
        let (new, token) = grant.check(now()).unwrap();
        assert!(token.starts_with(TOKEN_PREFIX), "{token}");
        assert_eq!(token.len(), TOKEN_PREFIX.len() + 43);
        assert_eq!(new.hash, token_hash(&token));
        assert_eq!(new.scope, Scope::Schedule);
        assert_eq!(new.tenants.as_ref().map(Vec::len), Some(2));
        assert!(TokenId::new(new.id.as_str()).is_ok());
        let (other, other_token) = TokenGrant {
            scope: "read".into(),
            ..TokenGrant::default()
        }
        .check(now())
        .unwrap();
        assert_ne!(token, other_token);
        assert_ne!(new.id, other.id);
        assert_eq!(other.tenants, None);
    }

    #[test]
    fn bad_grants_name_the_field() {
        let cases = [
            (
                TokenGrant {
                    scope: "root".into(),
                    ..TokenGrant::default()
                },
                "scope",
            ),
            (
                TokenGrant {
                    scope: "admin".into(),
                    tenants: vec!["a".into()],
                    ..TokenGrant::default()
                },
                "tenants",
            ),
            (
                TokenGrant {
                    scope: "read".into(),
                    tenants: vec![" ".into()],
                    ..TokenGrant::default()
                },
                "tenants",
            ),
            (
                TokenGrant {
                    scope: "read".into(),
                    expires_at: Some(now()),
                    ..TokenGrant::default()
                },
                "expires_at",
            ),
            (
                TokenGrant {
                    scope: "read".into(),
                    name: Some("a\nb".into()),
                    ..TokenGrant::default()
                },
                "name",
            ),
        ];
        for (grant, field) in cases {
            assert_eq!(grant.check(now()).unwrap_err().field, field);
        }
    }

    #[test]
    fn usable_until_revoked_or_expired() {
        let (new, _) = TokenGrant {
            scope: "read".into(),
            tenants: vec!["a".into()],
            expires_at: Some(now() + Duration::hours(1)),
            ..TokenGrant::default()
        }
        .check(now())
        .unwrap();
        let token = super::ApiToken {
            id: new.id,
            name: None,
            scope: new.scope,
            tenants: new.tenants,
            created_at: now(),
            expires_at: new.expires_at,
            revoked_at: None,
        };
        assert!(token.usable_at(now()));
        assert!(!token.usable_at(now() + Duration::hours(1)));
        let revoked = super::ApiToken {
            revoked_at: Some(now()),
            ..token.clone()
        };
        assert!(!revoked.usable_at(now()));
        assert!(token.sees_tenant(&crate::domain::TenantId::new("a").unwrap()));
        assert!(!token.sees_tenant(&crate::domain::TenantId::new("b").unwrap()));
    }

    #[test]
    fn token_ids_are_checked() {
        assert!(TokenId::new("tok_0123456789abcdef").is_ok());
        for bad in [
            "",
            "tok_",
            "tok_0123456789ABCDEF",
            "x_0123456789abcdef",
            "tok_0123",
        ] {
            assert_eq!(TokenId::new(bad).unwrap_err().field, "id", "{bad}");
        }
    }
}
