//! The tables as diesel sees them and the conversions between their rows
//! and the domain's types.
//!
//! # Layout
//! - `schema`: diesel's view of the tables.
//! - `enums`: the database's enum types.
//! - `rows`: rows as read, and their conversion into domain types.

pub(super) mod enums;
pub(super) mod rows;
pub(super) mod schema;
