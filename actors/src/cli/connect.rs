//! The database as a command reaches it. Every command acts as the
//! operating-system user who runs it, or the one `--as` names: its
//! admin calls are recorded in the audit log as `cli` and that user
//! (`acting_user`).

use remit::payload_crypto::PayloadKey;
use remit::store::Database;
use remit_actors::app::{self, AppError};
use remit_actors::config::Config;

/// Connects for a command that opens no payload: the configured key when
/// there is one, else a throwaway one.
pub(super) async fn connect_without_payloads(config: &Config) -> Result<Database, AppError> {
    let key = app::payload_key(config).unwrap_or_else(|_| PayloadKey::from_bytes(rand::random()));
    Ok(app::connect(config, key)
        .await?
        .acting_as(super::acting_user::actor()))
}

/// Connects for a command that seals (`app::connect_to_seal`), acting as
/// the user who runs it, as [`connect_without_payloads`] does.
pub(super) async fn connect_to_seal(
    config: &Config,
    key: PayloadKey,
) -> Result<Database, AppError> {
    Ok(app::connect_to_seal(config, key)
        .await?
        .acting_as(super::acting_user::actor()))
}
