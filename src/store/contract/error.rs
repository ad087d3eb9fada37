//! What can go wrong in the store, as typed causes. A stale lease is not an
//! error: transitions report it as [`super::TransitionOutcome::Fenced`].

use crate::domain::InvalidInput;
use crate::payload_crypto::PayloadCryptoError;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The request was rejected before anything was written.
    #[error("invalid input: {0}")]
    Invalid(InvalidInput),
    /// The same identity already exists with different content.
    #[error("conflict: {what} already exists with different content ({differs})")]
    Conflict {
        what: String,
        /// Which fields differ; never their values, which may be health data.
        differs: String,
    },
    #[error("no {what} with id {id}")]
    NotFound { what: &'static str, id: String },
    /// What was asked cannot be done while the thing is in use; `why`
    /// says what would let it go ahead.
    #[error("{what} {id} is in use: {why}")]
    InUse {
        what: &'static str,
        id: String,
        why: String,
    },
    /// A change made against an older version of the thing: it changed
    /// since the caller read it.
    #[error("{what} {id} changed since it was read (its tag is now {current}): read it again")]
    Stale {
        what: &'static str,
        id: String,
        current: String,
    },
    #[error("payload: {0}")]
    Payload(PayloadCryptoError),
    /// An operator erased the payload: its sealed bytes are gone for
    /// good, and there is nothing to open or send.
    #[error("payload {payload_ref} was erased at {at}")]
    Erased {
        payload_ref: uuid::Uuid,
        at: chrono::DateTime<chrono::Utc>,
    },
    /// A stored signing secret that the configured key cannot open (its
    /// value is never part of an error).
    #[error("signing secret {id} of destination {destination}: {source}")]
    Secret {
        id: String,
        destination: String,
        #[source]
        source: PayloadCryptoError,
    },
    /// The configured payload keys lack one that this store's payloads or
    /// secrets are sealed with: a process with them could not open those.
    #[error(
        "the payload keys configured (fingerprints {configured}) lack the key this database's \
         payloads or signing secrets are sealed with (fingerprints {missing}); set \
         REMIT_PAYLOAD_KEY to that key, or REMIT_PAYLOAD_KEYS to a ring that includes it"
    )]
    OtherPayloadKey {
        configured: String,
        /// The recorded fingerprints the ring lacks, comma-separated.
        missing: String,
    },
    #[error("could not get a database connection")]
    Pool(#[source] diesel_async::pooled_connection::bb8::RunError),
    #[error("could not open the connection pool")]
    PoolSetup(#[source] diesel_async::pooled_connection::PoolError),
    /// A connection to the database server could not be opened; `url` is
    /// the URL without its password, `cause` the backend's own account of
    /// why (PostgreSQL's is a `postgres::ConnectFailure`).
    #[error("could not connect to {url}")]
    Connect {
        url: String,
        #[source]
        cause: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A connection pooler in front of the database server, or its
    /// settings, do not fit `database.pooler` (PostgreSQL's account is a
    /// `postgres::PoolerError`).
    #[error(transparent)]
    Pooler(Box<dyn std::error::Error + Send + Sync>),
    #[error("could not open the database file")]
    Open(#[source] diesel::ConnectionError),
    /// The schema is not the one this build was made for.
    #[error("the database's schema does not fit this build of remit")]
    Schema(#[source] SchemaMismatch),
    #[error("database query failed")]
    Query(#[source] diesel::result::Error),
    /// The thread an embedded store's operation ran on failed.
    #[error("the database thread failed: {0}")]
    Thread(String),
    #[error("migration failed: {0}")]
    Migration(String),
    /// A row holds a value this build cannot represent (for example a
    /// region added by a newer schema).
    #[error("corrupt or unknown value in column {column}: {reason}")]
    Corrupt {
        column: &'static str,
        reason: String,
    },
}

impl StoreError {
    /// An `InUse` refusal with what lets the caller go ahead, in the words
    /// of the surface it reaches (a flag, a query parameter); any other
    /// error as it is.
    pub fn with_remedy(self, remedy: &str) -> Self {
        match self {
            StoreError::InUse { what, id, why } => StoreError::InUse {
                what,
                id,
                why: format!("{why}, or {remedy}"),
            },
            other => other,
        }
    }

    /// No destination with this id (in this store, or in this region).
    pub fn no_destination(id: &crate::domain::DestinationId) -> Self {
        StoreError::NotFound {
            what: "destination",
            id: id.to_string(),
        }
    }

    /// The payload of a task whose payload an operator erased at `at`.
    pub fn payload_erased(payload_ref: uuid::Uuid, at: chrono::DateTime<chrono::Utc>) -> Self {
        StoreError::Erased { payload_ref, at }
    }

    /// A fault of the database or the way to it (no connection, a query
    /// that failed, a thread that died), which may pass if tried again;
    /// not a property of the request (invalid, conflicting, missing).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            StoreError::Pool(_)
                | StoreError::PoolSetup(_)
                | StoreError::Connect { .. }
                | StoreError::Open(_)
                | StoreError::Query(_)
                | StoreError::Thread(_)
        )
    }
}

// Written out rather than derived with `#[from]`: these causes are already
// part of the message, and a `source` would print them twice in a chain.
impl From<InvalidInput> for StoreError {
    fn from(e: InvalidInput) -> Self {
        StoreError::Invalid(e)
    }
}

impl From<PayloadCryptoError> for StoreError {
    fn from(e: PayloadCryptoError) -> Self {
        StoreError::Payload(e)
    }
}

impl From<diesel::result::Error> for StoreError {
    fn from(e: diesel::result::Error) -> Self {
        StoreError::Query(e)
    }
}

impl From<diesel_async::pooled_connection::bb8::RunError> for StoreError {
    fn from(e: diesel_async::pooled_connection::bb8::RunError) -> Self {
        StoreError::Pool(e)
    }
}

/// How a schema differs from the binary's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaMismatch {
    #[error("the database has no remit schema: run `remit migrate`")]
    Empty,
    #[error("the schema is older than this build of remit (migrations {} are not applied): run `remit migrate`", .missing.join(", "))]
    Older { missing: Vec<String> },
    #[error("the schema is newer than this build of remit (it has migrations {} this binary does not know): this binary is older than the schema, so run the release that migrated it", .unknown.join(", "))]
    Newer { unknown: Vec<String> },
}
