//! What stops a process, and the exit status each cause gives.

use remit::payload_crypto::PAYLOAD_KEY_ENV;
use remit::store::StoreError;

use crate::config::ConfigError;
use crate::telemetry::TelemetryError;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{PAYLOAD_KEY_ENV} is not set (nor REMIT_PAYLOAD_KEYS, nor payload_key_file); create a key with `remit keygen`")]
    NoPayloadKey,
    #[error(transparent)]
    PayloadKey(#[from] remit::payload_crypto::PayloadCryptoError),
    /// A ring of payload keys that cannot be used: where it came from,
    /// which key and why, never a key's text.
    #[error("{source_name}: {reason}")]
    PayloadKeyRing { source_name: String, reason: String },
    #[error("database")]
    Store(#[from] StoreError),
    /// The replica the reports read (`database.read_url`): where the
    /// store's message names `database.pooler`, the replica's own key is
    /// `database.read_pooler`.
    #[error("the replica of database.read_url (what stands in front of it: database.read_pooler)")]
    Replica(#[source] StoreError),
    #[error("the demo failed: not every reminder was delivered in time (--give-up-after waits longer), or a request broke a deadline (the report above says which)")]
    DemoIncomplete,
    #[error(transparent)]
    Invalid(#[from] remit::domain::InvalidInput),
    #[error(transparent)]
    Telemetry(#[from] TelemetryError),
    /// A listener could not be opened; `what` is its setting (`api.bind`,
    /// `metrics.bind`) or what it was for.
    #[error("could not listen on {addr} ({what})")]
    Bind {
        what: &'static str,
        addr: String,
        #[source]
        source: std::io::Error,
    },
}

impl AppError {
    /// Configuration mistakes exit with 2, everything else with 1.
    pub fn exit_code(&self) -> u8 {
        match self {
            AppError::Config(_)
            | AppError::NoPayloadKey
            | AppError::PayloadKey(_)
            | AppError::PayloadKeyRing { .. }
            | AppError::Store(StoreError::OtherPayloadKey { .. })
            | AppError::Bind { .. }
            | AppError::Telemetry(_) => 2,
            _ => 1,
        }
    }
}
