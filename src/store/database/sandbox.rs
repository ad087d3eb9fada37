//! A throwaway database of remit's own: for `remit demo`, which must not
//! touch a real schedule, and for anything else that needs a scratch copy
//! of remit's tables. By default a SQLite file in a temporary directory;
//! inside a given PostgreSQL, a schema of its own.

use std::path::PathBuf;
use std::time::Duration;

use diesel_async::RunQueryDsl;

use crate::store::contract::{DatabaseUrl, StoreError};
use crate::store::postgres::PgConnector;

/// How long a schema's creation or removal waits for a new connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A scratch database, migrated, removed by [`Sandbox::remove`].
pub struct Sandbox {
    /// The URL to connect to.
    pub url: String,
    place: Place,
}

impl std::fmt::Debug for Sandbox {
    /// Where it is, never the URL (which may hold a password).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

enum Place {
    Dir(PathBuf),
    Schema { base: String, name: String },
}

impl Sandbox {
    /// A SQLite file in a new temporary directory, or (with `base`, a
    /// database URL) a schema of its own in that PostgreSQL, or a directory
    /// beside that SQLite file. `name` names the directory or schema:
    /// lower-case letters, digits, underscores.
    pub async fn create(base: Option<&str>, name: &str) -> Result<Self, StoreError> {
        check_name(name)?;
        let (url, place) = match base.map(DatabaseUrl::parse).transpose()? {
            Some(DatabaseUrl::Postgres(base)) => {
                let url = create_schema(&base, name).await?;
                let place = Place::Schema {
                    base,
                    name: name.to_owned(),
                };
                (url, place)
            }
            beside => {
                let parent = match beside {
                    Some(DatabaseUrl::Sqlite(path)) => {
                        path.parent().map(PathBuf::from).unwrap_or_default()
                    }
                    _ => std::env::temp_dir(),
                };
                // A directory of its own: never one that is already there,
                // since `remove` deletes it whole.
                let dir = parent.join(name);
                std::fs::create_dir(&dir).map_err(|e| {
                    StoreError::Migration(format!("could not create {}: {e}", dir.display()))
                })?;
                let url = format!("sqlite://{}", dir.join("remit.db").display());
                (url, Place::Dir(dir))
            }
        };
        let sandbox = Self { url, place };
        if let Err(e) = super::setup::migrate(&sandbox.url).await {
            let _ = sandbox.remove().await;
            return Err(e);
        }
        Ok(sandbox)
    }

    /// Where it is, for a person.
    pub fn describe(&self) -> String {
        match &self.place {
            Place::Dir(dir) => format!("a SQLite file in {}", dir.display()),
            Place::Schema { name, .. } => format!("schema {name} of PostgreSQL"),
        }
    }

    /// Removes the directory or drops the schema, with everything in it.
    pub async fn remove(self) -> Result<(), StoreError> {
        match self.place {
            Place::Dir(dir) => std::fs::remove_dir_all(&dir).map_err(|e| {
                StoreError::Migration(format!("could not remove {}: {e}", dir.display()))
            }),
            Place::Schema { base, name } => drop_schema(&base, &name).await,
        }
    }
}

/// Creates schema `name` and returns a database URL whose connections use
/// it. `name` must be a plain identifier (letters, digits, underscores).
pub async fn create_schema(database_url: &str, name: &str) -> Result<String, StoreError> {
    check_name(name)?;
    let mut conn = PgConnector::new(database_url, CONNECT_TIMEOUT)?
        .establish()
        .await?;
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
    let mut conn = PgConnector::new(database_url, CONNECT_TIMEOUT)?
        .establish()
        .await?;
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
