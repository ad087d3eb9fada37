//! Whether a database's schema is the one this build of remit was made
//! for: the migrations applied to it (diesel's `__diesel_schema_migrations`)
//! against those embedded in the binary. A process that uses the store
//! checks once, when it connects, and refuses a schema that is older (or
//! empty) or newer than itself, instead of failing on its first statement.

use diesel::migration::MigrationSource;

use crate::store::contract::{SchemaMismatch, StoreError};

/// Compares the applied migrations with the binary's. A newer schema
/// passes with `allow_newer` (a rollback onto a schema whose new parts
/// the old release ignores).
pub(crate) fn compare(
    applied: &[String],
    embedded: &[String],
    allow_newer: bool,
) -> Result<(), SchemaMismatch> {
    let missing: Vec<String> = embedded
        .iter()
        .filter(|v| !applied.contains(v))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(if missing.len() == embedded.len() {
            SchemaMismatch::Empty
        } else {
            SchemaMismatch::Older { missing }
        });
    }
    let unknown: Vec<String> = applied
        .iter()
        .filter(|v| !embedded.contains(v))
        .cloned()
        .collect();
    if unknown.is_empty() || allow_newer {
        Ok(())
    } else {
        Err(SchemaMismatch::Newer { unknown })
    }
}

/// The versions of the migrations `source` holds.
pub(crate) fn embedded_versions<DB: diesel::backend::Backend>(
    source: &impl MigrationSource<DB>,
) -> Result<Vec<String>, StoreError> {
    Ok(source
        .migrations()
        .map_err(|e| StoreError::Migration(e.to_string()))?
        .iter()
        .map(|m| m.name().version().to_string())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(v: &[&str]) -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_schema_is_empty_older_current_or_newer() {
        let embedded = versions(&["1", "2", "3"]);
        assert_eq!(compare(&[], &embedded, false), Err(SchemaMismatch::Empty));
        assert_eq!(
            compare(&versions(&["1"]), &embedded, false),
            Err(SchemaMismatch::Older {
                missing: versions(&["2", "3"])
            })
        );
        assert_eq!(compare(&embedded, &embedded, false), Ok(()));
        let newer = versions(&["1", "2", "3", "4"]);
        assert_eq!(
            compare(&newer, &embedded, false),
            Err(SchemaMismatch::Newer {
                unknown: versions(&["4"])
            })
        );
        assert_eq!(compare(&newer, &embedded, true), Ok(()));
    }

    #[test]
    fn the_messages_say_what_to_do() {
        assert!(SchemaMismatch::Empty
            .to_string()
            .contains("run `remit migrate`"));
        let newer = SchemaMismatch::Newer {
            unknown: versions(&["4"]),
        }
        .to_string();
        assert!(newer.contains("binary is older than the schema"), "{newer}");
    }
}
