//! Where a database URL points: the one place that tells PostgreSQL's URLs
//! from SQLite's.

use std::path::PathBuf;

use crate::domain::{quoted, InvalidInput};

/// Where a database URL points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    Postgres(String),
    Sqlite(PathBuf),
}

impl DatabaseUrl {
    /// Reads `postgres://…`, `postgresql://…` or `sqlite://PATH` (a relative
    /// PATH is taken from the working directory: `sqlite:///var/lib/remit.db`
    /// is absolute).
    pub fn parse(url: &str) -> Result<Self, InvalidInput> {
        const ACCEPTED: &str = "must be postgres://USER@HOST:PORT/DATABASE or sqlite://PATH";
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(DatabaseUrl::Postgres(url.to_owned()));
        }
        if let Some(path) = url.strip_prefix("sqlite://") {
            let path = path.split('?').next().unwrap_or_default();
            if path.is_empty() {
                return Err(InvalidInput::new(
                    "database.url",
                    format!("names no file ({ACCEPTED})"),
                ));
            }
            return Ok(DatabaseUrl::Sqlite(PathBuf::from(path)));
        }
        let scheme = url.split("://").next().filter(|s| *s != url);
        Err(InvalidInput::new(
            "database.url",
            match scheme {
                Some(scheme) => format!("has the unknown scheme {}: it {ACCEPTED}", quoted(scheme)),
                None => ACCEPTED.to_owned(),
            },
        ))
    }

    /// The URL with any password left out, fit for a log line.
    pub fn describe(&self) -> String {
        match self {
            DatabaseUrl::Postgres(url) => match url::Url::parse(url) {
                Ok(mut parsed) => {
                    if parsed.password().is_some() {
                        let _ = parsed.set_password(Some("***"));
                    }
                    format!(
                        "PostgreSQL at {}",
                        parsed.as_str().split('?').next().unwrap_or("")
                    )
                }
                Err(_) => "PostgreSQL".to_owned(),
            },
            DatabaseUrl::Sqlite(path) => format!("SQLite file {}", path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_their_backend_or_say_what_is_accepted() {
        assert_eq!(
            DatabaseUrl::parse("sqlite://remit.db"),
            Ok(DatabaseUrl::Sqlite(PathBuf::from("remit.db")))
        );
        assert_eq!(
            DatabaseUrl::parse("sqlite:///var/lib/remit/remit.db"),
            Ok(DatabaseUrl::Sqlite(PathBuf::from(
                "/var/lib/remit/remit.db"
            )))
        );
        assert!(matches!(
            DatabaseUrl::parse("postgresql://u@h/db"),
            Ok(DatabaseUrl::Postgres(_))
        ));
        let err = DatabaseUrl::parse("mysql://root@localhost/remit").unwrap_err();
        assert_eq!(err.field, "database.url");
        assert!(err.reason.contains("\"mysql\"") && err.reason.contains("sqlite://PATH"));
        assert!(DatabaseUrl::parse("sqlite://").is_err());
        assert!(DatabaseUrl::parse("remit.db").is_err());
    }

    #[test]
    fn a_described_url_hides_its_password() {
        let url = DatabaseUrl::parse("postgres://remit:hunter2@db:5432/remit")
            .unwrap_or_else(|e| panic!("{e}"));
        let text = url.describe();
        assert!(!text.contains("hunter2"), "{text}");
    }
}
