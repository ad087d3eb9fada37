//! `Store`: every call the runtime makes, as the union of the concept
//! traits it needs. Each backend implements the concepts; `Store` follows
//! by the blanket impl below, so code generic over `S: Store` may call any
//! of them.

use super::alerts::Alerts;
use super::api_tokens::ApiTokens;
use super::destinations::Destinations;
use super::leases::Leases;
use super::rates::Rates;
use super::schedule::Schedule;
use super::upkeep::Upkeep;

/// The durable schedule's runtime calls: [`Schedule`], [`Leases`],
/// [`Destinations`], [`Rates`], [`ApiTokens`], [`Upkeep`] and [`Alerts`].
/// Each is said once: a one-item call (`take_tokens`, `schedule`,
/// `finish`) is its batch call with one item, so a store implements only
/// the batch.
pub trait Store: Schedule + Leases + Destinations + Rates + ApiTokens + Upkeep + Alerts {}

impl<T> Store for T where T: Schedule + Leases + Destinations + Rates + ApiTokens + Upkeep + Alerts {}
