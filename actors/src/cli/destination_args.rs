//! The flags of `remit destination set`: each setting of
//! `PATCH /v1/destinations/{id}`, by the same name.

/// What `remit destination set` changes; a flag left out keeps its value.
#[derive(Debug, clap::Args)]
pub struct SetArgs {
    /// The destination's id.
    pub id: String,
    /// A new URL, admitted by the address policy as at registration.
    #[arg(long)]
    pub url: Option<String>,
    /// Requests per second across the region's processes.
    #[arg(long)]
    pub rate_per_second: Option<f64>,
    /// Requests that may go at once after a quiet spell.
    #[arg(long)]
    pub burst: Option<u32>,
    /// Requests under way at once, in each process.
    #[arg(long)]
    pub max_in_flight: Option<u32>,
    /// Whole-request timeout, in milliseconds (at most half the lease).
    #[arg(long)]
    pub timeout_ms: Option<u32>,
    /// Attempts before a task fails with `max_attempts`.
    #[arg(long)]
    pub max_attempts: Option<u32>,
    /// The retry horizon of tasks scheduled to it without their own.
    #[arg(long)]
    pub retry_horizon_seconds: Option<i64>,
    /// How long after its not_before an undelivered reminder is late.
    #[arg(long)]
    pub late_after_seconds: Option<i64>,
    /// How long a failure streak must last before it is disabled.
    #[arg(long)]
    pub disable_after_seconds: Option<i64>,
    /// How many failed attempts a streak must reach before it is disabled.
    #[arg(long)]
    pub disable_after_failures: Option<u32>,
    /// Give a setting back to the runtime (the configuration's entry for
    /// the destination, else its default), by its name (`burst`,
    /// `timeout_ms`, …); repeatable.
    #[arg(long, value_name = "SETTING")]
    pub reset: Vec<String>,
    /// A header sent with every request, `Name: value`; repeatable. Any of
    /// --header, --secret-header and --no-headers replaces every header it
    /// has (plain ones first, in order, then secret ones).
    #[arg(long, value_name = "NAME: VALUE")]
    pub header: Vec<String>,
    /// A secret header, `Name: value`, sealed at rest and never shown back;
    /// `Name` alone keeps the value stored under that name. Repeatable.
    #[arg(long, value_name = "NAME[: VALUE]", env = "REMIT_SECRET_HEADER")]
    pub secret_header: Vec<String>,
    /// Remove every header.
    #[arg(long, conflicts_with_all = ["header", "secret_header"])]
    pub no_headers: bool,
}
