//! `remit migrate`: applies the embedded schema migrations.

use remit_actors::app::AppError;
use remit_actors::config::Config;

use super::CliError;

pub async fn run(config: &Config) -> Result<(), CliError> {
    let applied = remit::store::migrate(&config.database.url)
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
