//! Why a connection to PostgreSQL could not be opened, or could be but is
//! not the one remit asked for (a pooler in between): the causes
//! `StoreError::Connect` and `StoreError::Pooler` carry. A file of its own,
//! below both the store's error and the code that connects.

use std::io;
use std::time::Duration;

use tokio_postgres::error::DbError;

use super::tls::{SslMode, TlsSettingsError};

/// Why a connection to PostgreSQL could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectFailure {
    #[error("the URL's TLS settings cannot be used")]
    Settings(#[source] TlsSettingsError),
    #[error("the URL is not a connection URL tokio-postgres understands")]
    Url(#[source] tokio_postgres::Error),
    /// Refused, unreachable, or a host name that does not resolve.
    #[error("the server could not be reached")]
    Unreachable(#[source] io::Error),
    #[error("the server did not answer within {} ms", .0.as_millis())]
    TimedOut(Duration),
    #[error("TLS failed")]
    Tls(#[source] TlsFailure),
    /// An unknown role, a wrong password, or no pg_hba.conf entry.
    #[error("the server refused the login")]
    Authentication(#[source] DbError),
    #[error("the database does not exist")]
    UnknownDatabase(#[source] DbError),
    #[error("the server refused the connection")]
    Refused(#[source] DbError),
    /// PgBouncer refuses the startup parameter remit asks for its session
    /// settings with (SQLSTATE 08P01).
    #[error(
        "the server refused the startup parameter `options`, as PgBouncer does: set \
         database.pooler = \"transaction\" (or \"session\") and database.direct_url to \
         PostgreSQL itself, for LISTEN and `remit migrate`"
    )]
    PoolerRefusedOptions(#[source] DbError),
    /// Setting the session settings of a connection through a session
    /// pooler.
    #[error("the new connection's session settings could not be set")]
    SessionSettings(#[source] diesel::result::Error),
    /// Filling the type cache of a connection behind a transaction pooler.
    #[error("the new connection's warm-up behind the transaction pooler failed")]
    WarmUp(#[source] diesel::result::Error),
    /// The session did not get the settings its startup packet asked for:
    /// something in between dropped them.
    #[error("the new connection is not PostgreSQL's own")]
    Pooler(#[source] PoolerError),
    /// Reading back what the startup packet asked for failed.
    #[error("the new connection's settings could not be read back")]
    Check(#[source] diesel::result::Error),
    #[error("the connection failed")]
    Other(#[source] tokio_postgres::Error),
    #[error("the new connection could not be set up")]
    Setup(#[source] diesel::ConnectionError),
}

/// How TLS failed.
#[derive(Debug, thiserror::Error)]
pub enum TlsFailure {
    #[error("the server does not offer TLS, which sslmode={0} requires")]
    NotOffered(SslMode),
    #[error("the server's certificate is not signed by a CA in sslrootcert")]
    UnknownCa(#[source] rustls::Error),
    /// Named without rustls's message, whose list of the certificate's
    /// names is in Rust's debug form (`DnsName("localhost")`).
    #[error(
        "the server's certificate is not valid for the host name {host} (sslmode=verify-full){}",
        if presented.is_empty() { String::new() } else { format!("; it names {presented}") }
    )]
    WrongHost { host: String, presented: String },
    #[error("the server refused remit's client certificate (sslcert, sslkey)")]
    ClientCertificateRefused(#[source] rustls::Error),
    #[error("the server's certificate was refused")]
    BadCertificate(#[source] rustls::Error),
    #[error("the handshake failed")]
    Handshake(#[source] rustls::Error),
    #[error("the handshake failed")]
    Other(#[source] tokio_postgres::Error),
}

/// The custom setting each connection to PostgreSQL itself asks for with a
/// value of its own (a name with a dot needs no server configuration).
pub(in crate::store::postgres) const NONCE_SETTING: &str = "remit.connect_nonce";

/// A pooler, or its absence, that does not fit what the server says.
#[derive(Debug, thiserror::Error)]
pub enum PoolerError {
    /// `options` did not reach PostgreSQL: PgBouncer with
    /// `ignore_startup_parameters = options` drops it.
    #[error(
        "the startup parameter `options` did not reach PostgreSQL ({NONCE_SETTING}, asked for \
         with a value fresh to this connection, reads {}), so neither did the session settings \
         remit asks for with it (enable_seqscan=off, jit=off): a connection pooler in front \
         drops it (PgBouncer's `ignore_startup_parameters = options`). Set database.pooler \
         (\"transaction\" for PgBouncer's pool_mode = transaction, \"session\" for session) and \
         database.direct_url to PostgreSQL itself: through a session pooler remit sets what it \
         needs once connected, and through a transaction pooler needs nothing set",
        found.as_deref().map_or_else(|| "nothing".to_owned(), |v| format!("{v:?}"))
    )]
    OptionsDropped { found: Option<String> },
    /// `options` in the URL cannot go through a pooler.
    #[error(
        "the URL sets `options`, which a pooler refuses: set those settings on the server \
         (ALTER ROLE … IN DATABASE … SET) instead"
    )]
    OptionsInUrl,
}
