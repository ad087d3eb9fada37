//! Payloads at rest: XChaCha20-Poly1305 under a key from configuration.
//!
//! The configuration may hold a ring of keys, newest first (to rotate the
//! key): the newest seals, and a sealed value opens with whichever key of
//! the ring has its fingerprint.
//!
//! The associated data binds each ciphertext to its `payload_ref` and
//! content type, so a row copied onto another reference does not decrypt.
//! Each sealed payload records the key's fingerprint, so opening it with a
//! different key is reported as exactly that rather than as corrupt data.
//!
//! A payload is sealed under a data key of its own, a random key made for
//! it and never used again, and only that data key is sealed under the
//! ring's key (envelope encryption). The sealed data key travels in the
//! row's `nonce` column after the body's nonce: the row holds the only
//! copy, so deleting the row (an erasure) destroys the key with the bytes,
//! and a change of the ring's key (`remit rekey`) seals the data key again
//! without touching the body. What that does and does not make final is
//! said in docs/operations.md ("Erasure"): a copy of the row taken before
//! the erasure opens with the ring key it was sealed under, until that key
//! is retired. Rows sealed before data keys (the body under the ring key
//! itself, a nonce of 24 bytes) still open, and a rekey moves them to a
//! data key.
//!
//! # Layout
//! - `format`: the sizes of keys, nonces and envelopes, and what a row
//!   stores; `error`: what sealing and opening can refuse.
//! - `key_ring`: [`PayloadKey`], the ring of keys a process holds: read
//!   from configuration, fingerprinted, the keys derived from it.
//! - `sealing`: sealing and opening a payload (its data key, the
//!   envelope, a reseal under the newest key) and a signing secret.
//! - `tests`: both, with fixed keys.

mod error;
mod format;
mod key_ring;
mod sealing;
#[cfg(test)]
mod tests;

pub use error::{PayloadCryptoError, RingError};
pub use format::{hex, SealedPayload, PAYLOAD_KEY_ENV};
pub use key_ring::PayloadKey;
