//! Committing what a delivery decided, or handing its task back unsent,
//! before anything is acknowledged.
//!
//! # Layout
//! - `finisher`: the Finisher, many deliveries' outcomes in one commit.
//! - `commit`: one delivery's finish, tried again while its lease lasts.
//! - `hand_back`: claimed tasks handed back unsent, in the background.
//! - `retry`: store calls for a held task, retried through a short fault
//!   of the database while the lease has time.

pub(super) mod commit;
pub mod finisher;
pub(super) mod hand_back;
pub(super) mod retry;
