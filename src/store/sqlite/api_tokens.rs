//! API tokens in the embedded file: one table for the database, looked up
//! by the SHA-256 of the token through its unique index. `tenants` is a
//! JSON array of strings.

use super::audit;
use super::store::Ctx;
use super::store::SqliteStore;
use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use super::rows::{instant, micros};
use crate::domain::{ApiToken, NewApiToken, TokenHash, TokenId};
use crate::store::contract::{ApiTokens, StoreError};
use crate::store::rules::audit_entries;
use crate::store::rules::columns::corrupt;
use crate::store::rules::token_rows::{token_conflict, TokenColumns};

const COLUMNS: &str = "id, name, scope, tenants, created_at, expires_at, revoked_at";

#[derive(QueryableByName)]
struct TokenRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Nullable<Text>)]
    name: Option<String>,
    #[diesel(sql_type = Text)]
    scope: String,
    #[diesel(sql_type = Nullable<Text>)]
    tenants: Option<String>,
    #[diesel(sql_type = BigInt)]
    created_at: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    expires_at: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    revoked_at: Option<i64>,
}

impl TokenRow {
    fn into_token(self) -> Result<ApiToken, StoreError> {
        let at = |column, m: Option<i64>| -> Result<Option<DateTime<Utc>>, StoreError> {
            m.map(|m| instant(column, m)).transpose()
        };
        let tenants = self
            .tenants
            .map(|json| serde_json::from_str::<Vec<String>>(&json))
            .transpose()
            .map_err(|e| corrupt("api_tokens.tenants", e))?;
        TokenColumns {
            id: self.id,
            name: self.name,
            scope: self.scope,
            tenants,
            created_at: instant("api_tokens.created_at", self.created_at)?,
            expires_at: at("api_tokens.expires_at", self.expires_at)?,
            revoked_at: at("api_tokens.revoked_at", self.revoked_at)?,
        }
        .into_token()
    }
}

/// Stores the token and its audit entry.
pub(super) fn add(
    conn: &mut SqliteConnection,
    new: NewApiToken,
    ctx: &Ctx,
) -> Result<ApiToken, StoreError> {
    let now = ctx.now;
    let tenants = new
        .tenants
        .map(|ts| ts.iter().map(|t| t.as_str().to_owned()).collect::<Vec<_>>())
        .map(|ts| serde_json::Value::from(ts).to_string());
    let rows: Vec<TokenRow> = diesel::sql_query(format!(
        "INSERT INTO api_tokens \
             (id, secret_hash, name, scope, tenants, created_at, expires_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING {COLUMNS}"
    ))
    .bind::<Text, _>(new.id.as_str())
    .bind::<Binary, _>(&new.hash[..])
    .bind::<Nullable<Text>, _>(new.name)
    .bind::<Text, _>(new.scope.as_str())
    .bind::<Nullable<Text>, _>(tenants)
    .bind::<BigInt, _>(micros(now))
    .bind::<Nullable<BigInt>, _>(new.expires_at.map(micros))
    .load(conn)?;
    let token = rows
        .into_iter()
        .next()
        .ok_or_else(token_conflict)?
        .into_token()?;
    audit::record(conn, ctx, audit_entries::token_created(&token))?;
    Ok(token)
}

pub(super) fn by_hash(
    conn: &mut SqliteConnection,
    hash: &TokenHash,
) -> Result<Option<ApiToken>, StoreError> {
    let rows: Vec<TokenRow> = diesel::sql_query(format!(
        "SELECT {COLUMNS} FROM api_tokens WHERE secret_hash = ?"
    ))
    .bind::<Binary, _>(&hash[..])
    .load(conn)?;
    rows.into_iter()
        .next()
        .map(TokenRow::into_token)
        .transpose()
}

pub(super) fn list(conn: &mut SqliteConnection) -> Result<Vec<ApiToken>, StoreError> {
    let rows: Vec<TokenRow> = diesel::sql_query(format!(
        "SELECT {COLUMNS} FROM api_tokens ORDER BY created_at, id"
    ))
    .load(conn)?;
    rows.into_iter().map(TokenRow::into_token).collect()
}

/// Revokes the token (a revoked one keeps its first revocation) and writes
/// the audit entry; an unknown id writes nothing.
pub(super) fn revoke(
    conn: &mut SqliteConnection,
    id: &TokenId,
    ctx: &Ctx,
) -> Result<Option<ApiToken>, StoreError> {
    let was: Vec<TokenRow> =
        diesel::sql_query(format!("SELECT {COLUMNS} FROM api_tokens WHERE id = ?"))
            .bind::<Text, _>(id.as_str())
            .load(conn)?;
    let Some(before) = was
        .into_iter()
        .next()
        .map(TokenRow::into_token)
        .transpose()?
    else {
        return Ok(None);
    };
    let rows: Vec<TokenRow> = diesel::sql_query(format!(
        "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? \
         RETURNING {COLUMNS}"
    ))
    .bind::<BigInt, _>(micros(ctx.now))
    .bind::<Text, _>(id.as_str())
    .load(conn)?;
    let after = rows
        .into_iter()
        .next()
        .map(TokenRow::into_token)
        .transpose()?
        .ok_or_else(|| {
            corrupt(
                "api_tokens.id",
                "the token went while its write lock was held",
            )
        })?;
    audit::record(conn, ctx, audit_entries::token_revoked(&before, &after))?;
    Ok(Some(after))
}

impl ApiTokens for SqliteStore {
    async fn add_api_token(&self, new: NewApiToken) -> Result<ApiToken, StoreError> {
        self.run(true, move |conn, ctx| self::add(conn, new, ctx))
            .await
    }

    async fn api_token_by_hash(&self, hash: &TokenHash) -> Result<Option<ApiToken>, StoreError> {
        let hash = *hash;
        self.run(false, move |conn, _| self::by_hash(conn, &hash))
            .await
    }

    async fn api_tokens(&self) -> Result<Vec<ApiToken>, StoreError> {
        self.run(false, |conn, _| self::list(conn)).await
    }

    async fn revoke_api_token(&self, id: &TokenId) -> Result<Option<ApiToken>, StoreError> {
        let id = id.clone();
        self.run(true, move |conn, ctx| self::revoke(conn, &id, ctx))
            .await
    }
}
