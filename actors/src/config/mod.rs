//! remit's configuration: defaults that work on one machine, then a TOML
//! file, then the environment (`REMIT_` plus the key path in upper case with
//! `__` between sections, e.g. `REMIT_LEASE__SECONDS`), then the usual
//! variables for secrets and the database.
//!
//! # Layout
//! - `sections`: the sections, each a table of the TOML file, with their
//!   defaults.
//! - `validate`: the checks a configuration passes before anything runs.
//! - `values`: [`Config`], the configuration as read, and what each part
//!   of remit reads from it.
//! - `error`: a configuration refused, naming the key; `read_error` a
//!   value that could not be read, in remit's words.

use std::path::Path;

use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;

mod error;
mod read_error;
mod sections;
mod validate;
mod values;

pub use error::ConfigError;
pub use sections::{
    ApiConfig, ClaimConfig, ConsoleConfig, ConsoleListener, DatabaseConfig, DestinationsConfig,
    EventsConfig, LeaseConfig, LogConfig, LogFormat, MetricsConfig, PoolerMode, ReconcileConfig,
    RetentionConfig, RetryConfig, SendConfig, ShutdownConfig, ThrottleConfig, ThrottleLimits,
    TracingConfig,
};
pub use values::Config;

/// The `REMIT_` variables that are not configuration keys: the secrets
/// read into settings of another name below, and the command line's own
/// (`REMIT_CONFIG` names the file, `REMIT_DESTINATION_SECRET` is a flag of
/// `destination add`). Without this list a systemd unit that sets
/// `REMIT_CONFIG` would be refused as setting an unknown key `config`.
pub const NOT_CONFIGURATION_KEYS: &[&str] = &[
    "PAYLOAD_KEY",
    "PAYLOAD_KEYS",
    "API_TOKEN",
    "CONFIG",
    "DESTINATION_SECRET",
    "SECRET_HEADER",
];

impl Config {
    /// Defaults, then `file` (when given), then the environment.
    pub fn load(file: Option<&Path>) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        if let Some(path) = file {
            if !path.exists() {
                return Err(ConfigError::MissingFile(path.display().to_string()));
            }
            figment = figment.merge(Toml::file_exact(path));
        }
        let config: Config = figment
            .merge(
                Env::prefixed("REMIT_")
                    .split("__")
                    .ignore(NOT_CONFIGURATION_KEYS),
            )
            .merge(
                Env::raw()
                    .only(&["DATABASE_URL"])
                    .map(|_| "database.url".into()),
            )
            .merge(
                Env::raw()
                    .only(&["REMIT_PAYLOAD_KEY"])
                    .map(|_| "payload_key".into()),
            )
            .merge(
                Env::raw()
                    .only(&["REMIT_PAYLOAD_KEYS"])
                    .map(|_| "payload_keys".into()),
            )
            .merge(
                Env::raw()
                    .only(&["REMIT_API_TOKEN"])
                    .map(|_| "api.token".into()),
            )
            .extract()
            .map_err(|e| ConfigError::Read(Box::new(e)))?;
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests;
