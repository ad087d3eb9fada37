//! `remit migrate`: applies the embedded schema migrations, over
//! `database.direct_url` when the database is behind a pooler: migrating
//! holds a session advisory lock and builds indexes concurrently, which a
//! transaction pooler cannot carry. Each try of a migration that timed
//! out waiting for a lock is told on stderr, with the sessions in its way.

use std::time::Duration;

use remit::store::{LockPatience, LockWait};
use remit_actors::app::AppError;
use remit_actors::config::{Config, ConfigError, PoolerMode};

use super::error::CliError;

pub async fn run(config: &Config, give_up_after: Duration) -> Result<(), CliError> {
    let url = match (&config.database.direct_url, config.database.pooler) {
        (Some(direct), _) => direct,
        (None, PoolerMode::Transaction) => {
            return Err(AppError::from(ConfigError::Invalid {
                key: "database.direct_url".into(),
                reason: "remit migrate needs a session of its own (an advisory lock, CREATE INDEX \
                         CONCURRENTLY), which a transaction pooler does not give: set it to \
                         PostgreSQL itself"
                    .into(),
            })
            .into())
        }
        (None, _) => &config.database.url,
    };
    let patience = LockPatience {
        give_up_after,
        ..LockPatience::default()
    };
    let tell = std::sync::Arc::new(|wait: &LockWait| eprintln!("{wait}"));
    let applied = remit::store::migrate_patiently(url, patience, tell)
        .await
        .map_err(AppError::from)?;
    if applied.is_empty() {
        println!("schema is up to date");
    }
    for version in applied {
        println!("applied {version}");
    }
    Ok(())
}
