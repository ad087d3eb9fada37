//! remit-actors: the actix runtime of remit and its command line.
//!
//! # Layout
//! - [`config`]: layered configuration (defaults, TOML, environment).
//! - [`runtime`]: one supervised actor tree per region: claimer, throttles,
//!   senders, reconciler, pruner.
//! - [`egress`]: where webhooks may be sent: refused address ranges, the
//!   operator's allowlist, and the resolver awc connects through.
//! - [`api`]: the HTTP API (actix-web) served by the same process.
//! - [`console`]: the web console under /console, signed in with an API
//!   token (server-rendered HTML, no payload ever shown).
//! - [`app`]: starting and stopping a whole process (`remit run`).
//! - [`demo`]: `remit demo`, the whole job against a local receiver.
//! - [`events_destination`]: the name of a region's events destination.
//! - [`signature`]: Standard Webhooks signing.
//! - [`logging`]: structured logs through slog.
//! - [`telemetry`]: traces over OpenTelemetry (API requests, claims,
//!   attempts), exported over OTLP when configured.
//! - [`reconcile`]: the ledger file and report rendering of `remit reconcile`.
//! - [`prune`]: the request and report of `remit prune`.
//! - [`rekey`]: `remit rekey`, and the counts under each payload key.
//! - [`status`]: `remit status`, the schedule's health on one screen.
//! - [`transfer`]: `remit export` and `remit import`, a schedule as JSON
//!   lines.
//! - [`schedule_file`]: `remit schedule --file`, many webhooks from a file.
//! - [`words`]: counts as a person reads them ("1 request").

pub mod api;
pub mod app;
pub mod config;
pub mod console;
pub mod demo;
pub mod egress;
pub mod events_destination;
pub mod logging;
pub mod prune;
pub mod reconcile;
pub mod rekey;
pub mod runtime;
pub mod schedule_file;
pub mod signature;
pub mod status;
pub mod telemetry;
pub mod transfer;
pub mod words;
