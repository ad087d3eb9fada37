//! The send policy: where remit may send a webhook.
//!
//! Anyone holding the API token registers destinations, so without a guard
//! they could aim remit at the machine it runs on, the cloud's metadata
//! service or a private network, and read in the attempt log what answered.
//! remit therefore refuses every address in the ranges of
//! [`remit::policy::blocked`], and plain `http://` (webhooks carry health
//! data), except where the operator's `send.allow_hosts` and
//! `send.allow_plain_http` open them.
//!
//! The policy is applied twice: when a destination is added (a clear error
//! for the caller), and when connecting, through a resolver that hands awc
//! only addresses that passed, so a DNS answer cannot change between the
//! check and the connection.
//!
//! # Layout
//! - `policy`: [`Egress`], the policy parsed, and why it refuses.
//! - [`allowlist`]: parsing and matching `send.allow_hosts`.
//! - [`resolver`]: the resolver awc connects through.

mod allowlist;
mod policy;
mod resolver;

pub use allowlist::{AllowList, ACCEPTED};
pub use policy::{Egress, Refusal, ResolveError};
pub use resolver::{tcp_connector, GuardedResolver};
