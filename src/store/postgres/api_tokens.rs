//! API tokens on PostgreSQL: one table for the database, looked up by the
//! SHA-256 of the token through its unique index.

use chrono::{DateTime, Utc};
use diesel::sql_types::{Array, Bytea, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::audit;
use crate::domain::{ApiToken, NewApiToken, TokenHash, TokenId};
use crate::store::contract::{ApiTokens, StoreError};
use crate::store::postgres::store::PgStore;
use crate::store::rules::audit_entries;
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
    #[diesel(sql_type = Nullable<Array<Text>>)]
    tenants: Option<Vec<String>>,
    #[diesel(sql_type = Timestamptz)]
    created_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    expires_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    revoked_at: Option<DateTime<Utc>>,
}

impl TokenRow {
    fn into_token(self) -> Result<ApiToken, StoreError> {
        TokenColumns {
            id: self.id,
            name: self.name,
            scope: self.scope,
            tenants: self.tenants,
            created_at: self.created_at,
            expires_at: self.expires_at,
            revoked_at: self.revoked_at,
        }
        .into_token()
    }
}

pub(super) async fn add(store: &PgStore, new: NewApiToken) -> Result<ApiToken, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let token = insert(store, conn, new).await?;
        audit::record(store, conn, audit_entries::token_created(&token)).await?;
        Ok(token)
    })
    .await
}

async fn insert(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    new: NewApiToken,
) -> Result<ApiToken, StoreError> {
    let tenants: Option<Vec<String>> = new
        .tenants
        .map(|ts| ts.iter().map(|t| t.as_str().to_owned()).collect());
    // $1 id, $2 secret_hash, $3 name, $4 scope, $5 tenants, $6 expires_at,
    // $7 now (NULL: the database's).
    let rows: Vec<TokenRow> = diesel::sql_query(format!(
        "INSERT INTO api_tokens \
             (id, secret_hash, name, scope, tenants, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, coalesce($7, now()), $6) \
         ON CONFLICT DO NOTHING RETURNING {COLUMNS}"
    ))
    .bind::<Text, _>(new.id.as_str())
    .bind::<Bytea, _>(&new.hash[..])
    .bind::<Nullable<Text>, _>(new.name)
    .bind::<Text, _>(new.scope.as_str())
    .bind::<Nullable<Array<Text>>, _>(tenants)
    .bind::<Nullable<Timestamptz>, _>(new.expires_at)
    .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
    .load(conn)
    .await?;
    rows.into_iter()
        .next()
        .ok_or_else(token_conflict)?
        .into_token()
}

pub(super) async fn by_hash(
    store: &PgStore,
    hash: &TokenHash,
) -> Result<Option<ApiToken>, StoreError> {
    let mut conn = store.conn().await?;
    let rows: Vec<TokenRow> = diesel::sql_query(format!(
        "SELECT {COLUMNS} FROM api_tokens WHERE secret_hash = $1"
    ))
    .bind::<Bytea, _>(&hash[..])
    .load(&mut conn)
    .await?;
    rows.into_iter()
        .next()
        .map(TokenRow::into_token)
        .transpose()
}

pub(super) async fn list(store: &PgStore) -> Result<Vec<ApiToken>, StoreError> {
    let mut conn = store.conn().await?;
    let rows: Vec<TokenRow> = diesel::sql_query(format!(
        "SELECT {COLUMNS} FROM api_tokens ORDER BY created_at, id"
    ))
    .load(&mut conn)
    .await?;
    rows.into_iter().map(TokenRow::into_token).collect()
}

/// Revokes under a lock on the token's row, read first for the audit
/// entry's `before`; an unknown id writes nothing.
pub(super) async fn revoke(store: &PgStore, id: &TokenId) -> Result<Option<ApiToken>, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let was: Vec<TokenRow> = diesel::sql_query(format!(
            "SELECT {COLUMNS} FROM api_tokens WHERE id = $1 FOR UPDATE"
        ))
        .bind::<Text, _>(id.as_str())
        .load(conn)
        .await?;
        let Some(before) = was
            .into_iter()
            .next()
            .map(TokenRow::into_token)
            .transpose()?
        else {
            return Ok(None);
        };
        let rows: Vec<TokenRow> = diesel::sql_query(format!(
            "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, $2, now()) \
             WHERE id = $1 RETURNING {COLUMNS}"
        ))
        .bind::<Text, _>(id.as_str())
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .load(conn)
        .await?;
        let after = rows
            .into_iter()
            .next()
            .map(TokenRow::into_token)
            .transpose()?
            .ok_or_else(|| StoreError::NotFound {
                what: "token",
                id: id.to_string(),
            })?;
        audit::record(store, conn, audit_entries::token_revoked(&before, &after)).await?;
        Ok(Some(after))
    })
    .await
}

impl ApiTokens for PgStore {
    async fn add_api_token(&self, new: NewApiToken) -> Result<ApiToken, StoreError> {
        self::add(self, new).await
    }

    async fn api_token_by_hash(&self, hash: &TokenHash) -> Result<Option<ApiToken>, StoreError> {
        self::by_hash(self, hash).await
    }

    async fn api_tokens(&self) -> Result<Vec<ApiToken>, StoreError> {
        self::list(self).await
    }

    async fn revoke_api_token(&self, id: &TokenId) -> Result<Option<ApiToken>, StoreError> {
        self::revoke(self, id).await
    }
}
