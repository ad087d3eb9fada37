//! A configuration refused: which key, and what is wrong with it.

use super::read_error;

/// A configuration error: which key, and what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A value that could not be read: which key, where it came from and
    /// what is accepted.
    #[error("{}", read_error::describe(.0))]
    Read(Box<figment::Error>),
    #[error("configuration key {key}: {reason}")]
    Invalid { key: String, reason: String },
    #[error("configuration file {0} does not exist")]
    MissingFile(String),
}

pub(super) fn invalid(key: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        reason: reason.into(),
    }
}
