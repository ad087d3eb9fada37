//! remit: durable, rate-limited webhook delivery on PostgreSQL or an
//! embedded SQLite file.
//!
//! # Layout
//! - [`domain`]: what a webhook task is: ids, regions, payloads, states and
//!   the attempt record. No I/O and no database types.
//! - [`policy`]: pure decisions, with `now` passed in: parsing Retry-After
//!   and the quota a receiver announces (RateLimit, X-RateLimit-*), local
//!   backoff with jitter, classifying an HTTP outcome into the next
//!   transition, and the IP ranges no webhook may be sent to.
//! - [`payload_crypto`]: sealing payloads at rest with an AEAD under a key
//!   that never enters the database.
//! - [`delivery`]: the store-side steps of one delivery before its request
//!   (what the request needs, the checks before it, a "not now" carried
//!   out, each retried through a short store fault on the caller's clock),
//!   generic over the store, so the runtime and the simulation run the same
//!   function.
//! - `error_chain`: an error and its causes on one line.
//! - [`store`]: the durable schedule. The only module that names diesel: the
//!   contract every backend implements ([`store::Store`] and the other
//!   traits), the rules they share, the PostgreSQL and SQLite backends with
//!   their migrations, the in-memory model, and [`store::Database`], which
//!   picks a backend by URL.

pub mod delivery;
pub mod domain;
mod error_chain;
pub mod payload_crypto;
pub mod policy;
pub mod store;

pub use error_chain::error_chain;
