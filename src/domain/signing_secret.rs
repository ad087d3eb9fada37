//! A destination's signing secrets: one or more, each valid until its
//! `expires_at` (or for good). Rotating adds a new secret and gives every
//! secret valid until then an end, so receivers have an overlap in which
//! each request carries one signature per valid secret.

use chrono::{DateTime, Duration, Utc};

use super::ids::InvalidInput;

/// How long the secrets valid before a rotation keep signing when the
/// caller does not say.
pub const DEFAULT_OVERLAP: Duration = Duration::hours(24);

/// How far in the past a rotation's `old_expires_at` may lie (clocks of a
/// caller and remit differ a little); later than this is refused.
pub const EXPIRY_TOLERANCE: Duration = Duration::seconds(60);

/// What is shown of a stored secret: never its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningSecret {
    pub id: String,
    pub created_at: DateTime<Utc>,
    /// When it stops signing; `None` for never.
    pub expires_at: Option<DateTime<Utc>>,
}

impl SigningSecret {
    pub fn valid_at(&self, now: DateTime<Utc>) -> bool {
        valid_at(self.expires_at, now)
    }
}

/// A secret as a sender uses it. The value is kept out of `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct TargetSecret {
    pub secret: String,
    pub expires_at: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for TargetSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TargetSecret")
            .field("secret", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// A rotation: the new secret, and when every secret valid until now
/// stops signing. The value is kept out of `Debug`.
#[derive(Clone)]
pub struct Rotation {
    pub secret: String,
    pub old_expires_at: DateTime<Utc>,
}

impl Rotation {
    /// Checks `old_expires_at` against `now`: not in the past beyond
    /// [`EXPIRY_TOLERANCE`]. The default is `now` + [`DEFAULT_OVERLAP`].
    pub fn new(
        secret: String,
        old_expires_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<Self, InvalidInput> {
        if secret.is_empty() {
            return Err(InvalidInput::new("secret", "must not be empty when given"));
        }
        let old_expires_at = old_expires_at.unwrap_or(now + DEFAULT_OVERLAP);
        if old_expires_at < now - EXPIRY_TOLERANCE {
            return Err(InvalidInput::new(
                "old_expires_at",
                format!(
                    "must not be in the past (more than {} s before now); \
                     use the current time to end the old secrets at once",
                    EXPIRY_TOLERANCE.num_seconds()
                ),
            ));
        }
        Ok(Self {
            secret,
            old_expires_at,
        })
    }

    /// The end a secret valid until now gets: its own end if that comes
    /// sooner, the rotation's otherwise. An ended secret keeps its end.
    pub fn new_end(
        &self,
        expires_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Option<DateTime<Utc>> {
        match expires_at {
            Some(end) if end <= now || end <= self.old_expires_at => Some(end),
            _ => Some(self.old_expires_at),
        }
    }
}

impl std::fmt::Debug for Rotation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rotation")
            .field("secret", &"<redacted>")
            .field("old_expires_at", &self.old_expires_at)
            .finish()
    }
}

/// Whether a secret ending at `expires_at` still signs at `now`.
pub fn valid_at(expires_at: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
    expires_at.is_none_or(|end| end > now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    #[test]
    fn old_expires_at_defaults_to_a_day_and_refuses_the_past() {
        let r = Rotation::new("whsec_x".into(), None, at(0)).unwrap();
        assert_eq!(r.old_expires_at, at(86_400));
        assert!(Rotation::new("whsec_x".into(), Some(at(-30)), at(0)).is_ok());
        let refused = Rotation::new("whsec_x".into(), Some(at(-61)), at(0)).unwrap_err();
        assert_eq!(refused.field, "old_expires_at");
    }

    #[test]
    fn a_sooner_end_is_kept_and_an_ended_secret_stays_ended() {
        let r = Rotation::new("whsec_x".into(), Some(at(100)), at(0)).unwrap();
        assert_eq!(r.new_end(None, at(0)), Some(at(100)));
        assert_eq!(r.new_end(Some(at(50)), at(0)), Some(at(50)));
        assert_eq!(r.new_end(Some(at(500)), at(0)), Some(at(100)));
        assert_eq!(r.new_end(Some(at(-5)), at(0)), Some(at(-5)));
        assert!(valid_at(None, at(0)));
        assert!(!valid_at(Some(at(0)), at(0)));
    }

    #[test]
    fn debug_hides_the_secret() {
        let r = Rotation::new("whsec_hidden".into(), None, at(0)).unwrap();
        assert!(!format!("{r:?}").contains("hidden"));
    }
}
