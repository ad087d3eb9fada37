//! Everything between `PgStore` and the server: opening a connection
//! (URL, TLS, the pooler in between), the statements prepared on each,
//! the schema's migrations and its check at start, the listening
//! connection.
//!
//! # Layout
//! - `connect`: every connection to PostgreSQL; `connect_failure`: why one
//!   could not be opened, or is not PostgreSQL's own.
//! - `tls`: TLS as the URL's `sslmode`, `sslrootcert`, `sslcert` and
//!   `sslkey` ask for it; `tls_checks`: what the modes that check less
//!   than `verify-full` accept.
//! - `pooler`: what changes behind a connection pooler (PgBouncer), and
//!   the session settings checked at connect.
//! - `prepared`: the hot statements, built so each connection prepares
//!   them once.
//! - `migrate`: the embedded migrations (`migrations/postgres`);
//!   `schema_check`: whether a database has this build's; `lock_holders`:
//!   the sessions likely in a migration's way.
//! - `notify`: the LISTEN/NOTIFY channels and the connection that listens.

pub(super) mod connect;
pub(super) mod connect_failure;
pub(super) mod lock_holders;
pub(in crate::store) mod migrate;
pub(super) mod notify;
pub(super) mod pooler;
pub(super) mod prepared;
pub(super) mod schema_check;
pub(super) mod tls;
pub(super) mod tls_checks;
