//! A receiver endpoint and its region.

use chrono::{DateTime, Utc};

use super::destination_settings::DestinationSettings;
use super::ids::DestinationId;
use super::ids::InvalidInput;
use super::ids::Region;
use super::signing_secret::TargetSecret;

#[derive(Debug, Clone, PartialEq)]
pub struct Destination {
    pub id: DestinationId,
    pub region: Region,
    pub url: url::Url,
    pub has_signing_secret: bool,
    pub enabled: bool,
    pub paused_until: Option<DateTime<Utc>>,
    /// Its failure streak, why it is disabled, and its own thresholds.
    pub health: Box<DestinationHealth>,
    /// Its own limits, timeout, retry policy and headers. Read for a send,
    /// a secret header carries its value; read for display, only its hint.
    pub settings: Box<DestinationSettings>,
}

impl Destination {
    /// A tag of what a change of the destination may change (its URL,
    /// settings, headers as shown, thresholds): the same for the same
    /// values, another after any change. The API gives it as the `ETag`, and
    /// a change carrying it (`If-Match`) is refused against a newer row, so
    /// an editor cannot undo a change it never saw. A secret header counts
    /// by its name and hint, as it is shown.
    pub fn settings_tag(&self) -> String {
        use sha2::{Digest, Sha256};
        let s = &self.settings;
        let headers: Vec<String> = s
            .headers
            .iter()
            .map(|h| match &h.value {
                super::custom_header::HeaderValue::Plain(v) => format!("{}:plain:{v}", h.name),
                super::custom_header::HeaderValue::Secret { hint, .. } => {
                    format!("{}:secret:{hint:?}", h.name)
                }
            })
            .collect();
        let text = format!(
            "{}\n{}\n{:?}\n{:?}\n{}",
            self.url,
            s.tag_lines(),
            self.health.overrides.after_seconds,
            self.health.overrides.failures,
            headers.join("\n"),
        );
        let digest = Sha256::digest(text.as_bytes());
        crate::payload_crypto::hex(&digest[..12])
    }
}

/// What a destination's row says of its receiver's health (see
/// `policy::health`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DestinationHealth {
    /// Attempts failed since the last success.
    pub failure_streak: u32,
    /// When the first of them ended; `None` with no streak.
    pub failure_streak_since: Option<DateTime<Utc>>,
    /// Why it is disabled (`auto: …` or the operator's reason); `None`
    /// while enabled.
    pub disabled_reason: Option<String>,
    pub disabled_at: Option<DateTime<Utc>>,
    /// The last failed attempt's status or transport error kind, while
    /// no success has come since (a success clears it).
    pub last_error: Option<String>,
    /// When that attempt ended; `None` with no last error, or for one
    /// recorded before this was kept.
    pub last_error_at: Option<DateTime<Utc>>,
    /// This destination's own thresholds, in place of the runtime's.
    pub overrides: DisableOverrides,
}

/// A destination's own disable thresholds; `None` takes the runtime's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DisableOverrides {
    pub after_seconds: Option<i64>,
    pub failures: Option<u32>,
}

impl DisableOverrides {
    /// Checks each threshold: seconds not negative, failures at least one.
    pub fn new(after_seconds: Option<i64>, failures: Option<u32>) -> Result<Self, InvalidInput> {
        if after_seconds.is_some_and(|s| !(0..=MAX_DISABLE_AFTER_SECONDS).contains(&s)) {
            return Err(InvalidInput::new(
                "disable_after_seconds",
                format!("must be between 0 and {MAX_DISABLE_AFTER_SECONDS}"),
            ));
        }
        if failures.is_some_and(|f| !(1..=i32::MAX as u32).contains(&f)) {
            return Err(InvalidInput::new(
                "disable_after_failures",
                format!("must be between 1 and {}", i32::MAX),
            ));
        }
        Ok(Self {
            after_seconds,
            failures,
        })
    }
}

/// The longest `disable_after_seconds` accepted: ten years.
pub const MAX_DISABLE_AFTER_SECONDS: i64 = 10 * 366 * 24 * 3600;

/// What a sender needs to know about a destination right before a request.
#[derive(Clone, PartialEq)]
pub struct SendTarget {
    pub destination: Destination,
    /// The secrets valid when it was read, newest first (values are kept
    /// out of `Debug`): each signs a request sent before its end.
    pub signing_secrets: Vec<TargetSecret>,
    /// How much of the destination's pause is left, by the store's clock;
    /// `None` when it is not paused.
    pub pause_left: Option<chrono::Duration>,
}

impl SendTarget {
    /// The secrets that sign a request sent at `now`, newest first.
    pub fn secrets_at(&self, now: DateTime<Utc>) -> impl Iterator<Item = &str> {
        self.signing_secrets
            .iter()
            .filter(move |s| super::signing_secret::valid_at(s.expires_at, now))
            .map(|s| s.secret.as_str())
    }
}

impl std::fmt::Debug for SendTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendTarget")
            .field("destination", &self.destination)
            .field("signing_secrets", &self.signing_secrets)
            .field("pause_left", &self.pause_left)
            .finish()
    }
}

/// A destination to register. The signing secret is kept out of `Debug`.
#[derive(Clone)]
pub struct NewDestination {
    pub id: DestinationId,
    pub region: Region,
    pub url: url::Url,
    pub signing_secret: Option<String>,
    /// Its own disable thresholds (none: the runtime's).
    pub overrides: DisableOverrides,
}

impl NewDestination {
    /// The same registration with its own disable thresholds.
    pub fn with_overrides(self, overrides: DisableOverrides) -> Self {
        Self { overrides, ..self }
    }

    /// Validates the URL: absolute, http or https, with a host and no
    /// credentials. A refusal never repeats the URL, which may hold a
    /// password.
    pub fn new(
        id: DestinationId,
        region: Region,
        url: &str,
        signing_secret: Option<String>,
    ) -> Result<Self, InvalidInput> {
        let parsed = checked_url(url)?;
        if matches!(&signing_secret, Some(s) if s.is_empty()) {
            return Err(InvalidInput::new("secret", "must not be empty when given"));
        }
        Ok(Self {
            id,
            region,
            url: parsed,
            signing_secret,
            overrides: DisableOverrides::default(),
        })
    }
}

/// A destination's URL: absolute, http or https, with a host and no
/// credentials. A refusal never repeats the URL, which may hold a
/// password.
pub fn checked_url(url: &str) -> Result<url::Url, InvalidInput> {
    let parsed = url::Url::parse(url)
        .map_err(|e| InvalidInput::new("url", format!("not an absolute URL ({e})")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(InvalidInput::new("url", "scheme must be http or https"));
    }
    if parsed.host().is_none() {
        return Err(InvalidInput::new("url", "must name a host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(InvalidInput::new(
            "url",
            "must not contain credentials (user:password@); a receiver \
             authenticates remit by the webhook signature (`secret`), or by a \
             secret header of its own",
        ));
    }
    Ok(parsed)
}

impl std::fmt::Debug for NewDestination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewDestination")
            .field("id", &self.id)
            .field("region", &self.region)
            .field("url", &self.url.as_str())
            .field(
                "signing_secret",
                &self.signing_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("overrides", &self.overrides)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> DestinationId {
        DestinationId::new("crm").unwrap()
    }

    #[test]
    fn url_must_be_http_with_a_host() {
        assert_eq!(
            NewDestination::new(id(), Region::US, "ftp://x", None)
                .unwrap_err()
                .field,
            "url"
        );
        assert_eq!(
            NewDestination::new(id(), Region::US, "not a url", None)
                .unwrap_err()
                .field,
            "url"
        );
        assert!(NewDestination::new(id(), Region::US, "https://hooks.example/in", None).is_ok());
    }

    #[test]
    fn credentials_are_refused_and_not_repeated() {
        for url in [
            "https://user:hunter2@hooks.example/in",
            "https://user@hooks.example/in",
            "https://:hunter2@hooks.example/in",
        ] {
            let refused = NewDestination::new(id(), Region::US, url, None).unwrap_err();
            assert_eq!(refused.field, "url");
            assert!(!refused.reason.contains("hunter2"), "{refused}");
            assert!(!refused.reason.contains("hooks.example"), "{refused}");
        }
    }

    #[test]
    fn debug_hides_the_secret() {
        let d = NewDestination::new(
            id(),
            Region::EU,
            "http://127.0.0.1:1/",
            Some("whsec_abc".into()),
        )
        .unwrap();
        assert!(!format!("{d:?}").contains("whsec_abc"));
    }
}
