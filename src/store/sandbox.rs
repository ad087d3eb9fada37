//! A schema of its own inside an existing database: for `remit demo`,
//! which must not touch a real schedule, and for anything else that needs
//! a throwaway copy of remit's tables.

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::StoreError;

/// Creates schema `name` and returns a database URL whose connections use
/// it. `name` must be a plain identifier (letters, digits, underscores).
pub async fn create_schema(database_url: &str, name: &str) -> Result<String, StoreError> {
    check_name(name)?;
    let mut conn = AsyncPgConnection::establish(database_url)
        .await
        .map_err(StoreError::Connect)?;
    diesel::sql_query(format!("CREATE SCHEMA {name}"))
        .execute(&mut conn)
        .await?;
    let sep = if database_url.contains('?') { '&' } else { '?' };
    Ok(format!(
        "{database_url}{sep}options=-c%20search_path%3D{name}"
    ))
}

/// Drops schema `name` and everything in it.
pub async fn drop_schema(database_url: &str, name: &str) -> Result<(), StoreError> {
    check_name(name)?;
    let mut conn = AsyncPgConnection::establish(database_url)
        .await
        .map_err(StoreError::Connect)?;
    diesel::sql_query(format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
        .execute(&mut conn)
        .await?;
    Ok(())
}

fn check_name(name: &str) -> Result<(), StoreError> {
    let plain = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        Ok(())
    } else {
        Err(crate::domain::InvalidInput::new(
            "schema",
            "must be lower-case letters, digits and underscores, at most 63, not starting with a digit",
        )
        .into())
    }
}
