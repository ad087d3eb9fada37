//! The `remit` command line's commands and flags, as clap reads them.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use super::report_format::ReportFormat;
pub use super::task_args::{CancelArgs, EraseArgs, TaskArgs, TaskListArgs};

#[derive(Debug, Parser)]
#[command(
    name = "remit",
    version,
    about = "Durable, rate-limited webhook delivery"
)]
pub struct Cli {
    /// A TOML configuration file (see config/remit.example.toml).
    #[arg(long, global = true, env = "REMIT_CONFIG")]
    pub config: Option<PathBuf>,
    /// Who the audit log records a command's changes as (`cli NAME`):
    /// by default the operating-system user the process runs as.
    #[arg(long = "as", value_name = "NAME", global = true)]
    pub as_user: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show remit's whole job on this machine, with nothing to set up.
    ///
    /// On a SQLite file in a temporary directory (removed afterwards) it
    /// starts a local receiver with six endpoints: two rate-limit with 429
    /// and Retry-After (in seconds and as an HTTP-date), one answers 503
    /// now and then, one is slow. It schedules 2,000 reminders for two
    /// tenants, due over the next seconds, and runs a supervised region
    /// with a bar per state; midway it crashes a sender and follows the
    /// tasks it held. At the end it reports what the receiver saw and
    /// exits 0 only if every reminder was delivered and no request came
    /// before its deadline (about 20 s).
    Demo {
        /// Run on this database instead (postgres://… runs in a schema of
        /// its own, dropped afterwards).
        #[arg(long)]
        database_url: Option<String>,
        /// Fail if not every reminder is delivered this long after they
        /// were scheduled (e.g. 50s, 5m): a slow or busy machine needs
        /// longer than the usual 20 s.
        #[arg(long, default_value = "50s", value_parser = humantime::parse_duration)]
        give_up_after: std::time::Duration,
    },
    /// Apply the embedded schema migrations, one at a time. A migration
    /// in a transaction that waits longer than a second for a lock (a long
    /// transaction in its way) gives it up, so that claims and finishes go
    /// on, and is tried again, naming the sessions in its way. An index
    /// built concurrently blocks no one, and waits for the transactions
    /// under way as long as they last, naming them every 5 s.
    Migrate {
        /// Stop trying a migration in a transaction whose locks stay taken
        /// this long (e.g. 2m, 30s), and exit naming what holds them.
        #[arg(long, default_value = "2m", value_parser = humantime::parse_duration)]
        give_up_after: std::time::Duration,
    },
    /// Run a region's delivery runtime and the HTTP API until SIGTERM.
    Run {
        /// The region to serve (overrides the configuration).
        #[arg(long)]
        region: Option<String>,
    },
    /// Serve the web console (and /healthz) against the configured
    /// database, with no delivery runtime; bulk replays asked for there
    /// are worked by this process.
    Console {
        /// Where to listen, e.g. 127.0.0.1:8081.
        #[arg(long)]
        bind: String,
        /// The region to show (overrides the configuration).
        #[arg(long)]
        region: Option<String>,
    },
    /// Manage destinations.
    #[command(subcommand)]
    Destination(DestinationCommand),
    /// Make, list and revoke API tokens (one set for the whole database).
    #[command(subcommand)]
    Token(TokenCommand),
    /// Print a fresh payload key for REMIT_PAYLOAD_KEY.
    Keygen,
    /// Re-seal stored payloads and signing secrets under the newest key of
    /// the ring (REMIT_PAYLOAD_KEYS), in small batches, safely while the
    /// runtimes run; then print what is left under each older key.
    Rekey {
        /// Rows of each kind per transaction.
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=10_000))]
        batch: u32,
    },
    /// Check the schedule: expired leases, work eligible for too long,
    /// tasks past their horizon, terminal counts, and (with a ledger) what
    /// the source of truth expects. Exits 1 when it finds something.
    Reconcile {
        /// One region (default: every region).
        #[arg(long)]
        region: Option<String>,
        /// CSV of tenant_id,reminder_id,due (RFC 3339) with a header row.
        #[arg(long)]
        ledger: Option<PathBuf>,
        /// Report eligible work waiting longer than this (e.g. 15m, 2h).
        #[arg(long, default_value = "15m", value_parser = humantime::parse_duration)]
        older_than: std::time::Duration,
        /// Hand expired leases back: due at once, the lost attempt logged.
        #[arg(long)]
        reclaim: bool,
        #[arg(long, value_enum, default_value = "text")]
        format: ReportFormat,
    },
    /// Show the schedule's health from the database alone: tasks by state
    /// per region, the oldest eligible task's wait, expired leases, paused
    /// destinations, where retries and 429s pile up, failures of the last
    /// day and deadline-to-delivery latency of the last hour.
    Status {
        /// One region (default: every region).
        #[arg(long)]
        region: Option<String>,
        #[arg(long, value_enum, default_value = "text")]
        format: ReportFormat,
    },
    /// Replay every failed task of a region that matches a filter: the
    /// replay is recorded as a job (a running region works it too), then
    /// worked here to the end, printing its progress and the count. Only
    /// tasks that had failed when it was made are replayed.
    Replay {
        /// KEY=VALUE, repeatable, at least one: tenant, reminder,
        /// destination, reason (as the task shows it), from and until
        /// (RFC 3339; the task's not_before in [from, until)).
        #[arg(
            long = "filter",
            value_name = "KEY=VALUE",
            required_unless_present = "job"
        )]
        filters: Vec<String>,
        /// Resume the recorded replay with this id, or report it when it
        /// has finished (a replay of another region than --region's is
        /// not found).
        #[arg(long, conflicts_with = "filters")]
        job: Option<String>,
        /// The region (default: the configured one).
        #[arg(long)]
        region: Option<String>,
    },
    /// Delete delivered and failed tasks that ended longer ago than
    /// --older-than, with their attempts and payloads, in batches of
    /// retention.batch_size. A pruned tenant and reminder can be scheduled,
    /// and delivered, again.
    Prune {
        /// One region (default: every region).
        #[arg(long)]
        region: Option<String>,
        /// How long ago a task must have ended (e.g. 30d, 720h; default:
        /// retention.keep_days).
        #[arg(long, value_parser = humantime::parse_duration)]
        older_than: Option<std::time::Duration>,
    },
    /// Write the whole schedule (destinations, tasks with their sealed
    /// payloads, attempt logs) as JSON lines, to move it to another store
    /// with `remit import`. Stop the runtimes first. The file holds
    /// signing secrets: keep it as a secret.
    Export {
        /// Where to write (default: standard output).
        #[arg(long, value_name = "PATH", default_value = "-")]
        file: PathBuf,
    },
    /// Read a `remit export` into the configured database. Every line is
    /// checked first: one that breaks a rule of the schedule refuses the
    /// whole file (exit 2, naming the line and field) and nothing is
    /// written. Every task continues where it was, under the same id and
    /// key; running the same import again changes nothing.
    Import {
        /// The export to read, or `-` for standard input.
        #[arg(long, value_name = "PATH")]
        file: PathBuf,
    },
    /// Schedule one webhook (prints its task id and idempotency key), or
    /// many from a file with --file.
    Schedule(ScheduleArgs),
    /// Cancel a task that has not ended: one not in flight ends
    /// `cancelled` now; one in flight ends so after its attempt, unless
    /// that attempt delivers it. With --filter, every task of a region
    /// that matches and has not ended: the cancel is recorded as a job (a
    /// running region works it too), then worked here to the end, printing
    /// its progress and the count. Only tasks scheduled before it was made
    /// are cancelled.
    Cancel(CancelArgs),
    /// Move a task that has not been delivered to a new deadline, with a
    /// new payload if given; the idempotency key stays. A failed or
    /// cancelled task comes back `pending`.
    Reschedule {
        #[command(flatten)]
        task: TaskArgs,
        /// The new deadline, RFC 3339 (e.g. 2026-10-01T09:00:00Z).
        #[arg(long)]
        not_before: String,
        /// A file holding the new JSON payload, or `-` for standard input.
        #[arg(long, value_name = "PATH", conflicts_with = "payload")]
        payload_file: Option<PathBuf>,
        /// The new JSON payload itself (visible in the process list).
        #[arg(long)]
        payload: Option<String>,
    },
    /// Erase a task's payload (the task and its attempt log stay), or
    /// every payload of a tenant with --tenant alone; a task that has not
    /// ended is cancelled by it.
    Erase(EraseArgs),
    /// Make every task of a destination waiting for a retry due now (after
    /// its receiver is fixed), keeping attempts and keys.
    RetryNow {
        #[arg(long)]
        destination: String,
        /// Only this tenant's tasks.
        #[arg(long)]
        tenant: Option<String>,
    },
    /// List a region's tasks, newest first, with the console's filters;
    /// never a payload.
    Tasks(TaskListArgs),
    /// Show the audit log of admin actions, newest first: who did what,
    /// to what, when, with the settings before and after (never a secret).
    Audit(super::audit::AuditArgs),
}

/// `remit schedule`: one webhook from flags, or many from `--file`.
#[derive(Debug, clap::Args)]
pub struct ScheduleArgs {
    /// A file (or `-` for standard input) with one JSON object per
    /// line, shaped like POST /v1/tasks; prints one line per task.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["tenant", "reminder", "destination", "region", "not_before", "payload", "payload_file", "ordering_key"])]
    pub file: Option<PathBuf>,
    #[arg(long, required_unless_present = "file")]
    pub tenant: Option<String>,
    #[arg(long, required_unless_present = "file")]
    pub reminder: Option<String>,
    #[arg(long, required_unless_present = "file")]
    pub destination: Option<String>,
    #[arg(long, required_unless_present = "file")]
    pub region: Option<String>,
    /// The business deadline, RFC 3339 (e.g. 2026-08-13T09:00:00Z).
    #[arg(long, required_unless_present = "file")]
    pub not_before: Option<String>,
    /// A file holding the JSON payload, or `-` for standard input. The
    /// payload is stored and sent byte for byte, and stays out of the
    /// process list (prefer this to --payload for health data).
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with = "payload",
        required_unless_present_any = ["payload", "file"]
    )]
    pub payload_file: Option<PathBuf>,
    /// The JSON payload itself (visible in the process list).
    #[arg(long)]
    pub payload: Option<String>,
    /// Send this task in line with the destination's other tasks of the
    /// same key: one at a time, in order of not_before, then scheduling.
    #[arg(long)]
    pub ordering_key: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum DestinationCommand {
    /// Register a receiver.
    Add {
        #[arg(long)]
        id: String,
        #[arg(long)]
        region: String,
        #[arg(long)]
        url: String,
        /// Signing secret, `whsec_<base64>`; webhooks are signed when given.
        #[arg(long, env = "REMIT_DESTINATION_SECRET")]
        secret: Option<String>,
        /// Its own time a failure streak must last before it is disabled,
        /// in seconds (default: `destinations.disable_after_seconds`).
        #[arg(long)]
        disable_after_seconds: Option<i64>,
        /// Its own number of failed attempts before it is disabled
        /// (default: `destinations.disable_after_failures`).
        #[arg(long)]
        disable_after_failures: Option<u32>,
    },
    /// Take a destination out of delivery: its tasks wait, unsent, until
    /// it is enabled or their horizon passes.
    Disable {
        id: String,
        /// Recorded as why (default: `manual`).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Bring a destination back: its failure streak and reason are
    /// cleared and its waiting tasks go out under the usual throttle.
    Enable { id: String },
    /// Add a new signing secret; the secrets valid until now keep signing
    /// until --old-expires-at. Without --secret, remit generates one and
    /// prints it once.
    RotateSecret {
        /// The destination's id.
        id: String,
        /// The new secret, `whsec_<base64>` of 24 to 64 bytes.
        #[arg(long, env = "REMIT_DESTINATION_SECRET")]
        secret: Option<String>,
        /// When the old secrets stop signing, RFC 3339 (default: 24 hours
        /// from now; not in the past).
        #[arg(long, value_name = "WHEN")]
        old_expires_at: Option<String>,
    },
    /// List a destination's signing secrets (never their values).
    Secrets {
        /// The destination's id.
        id: String,
    },
    /// Change a destination's URL or its own settings (limits, timeout,
    /// retry policy, lateness, thresholds, headers); every process of the
    /// region takes them within about a second. Prints it as it now is.
    Set(super::destination_args::SetArgs),
    /// Print a destination with its settings, as JSON (secret header
    /// values never).
    Show {
        /// The destination's id.
        id: String,
    },
    /// Delete a destination: refused while it has tasks that have not
    /// ended, unless --cancel-tasks.
    Delete {
        /// The destination's id.
        id: String,
        /// Cancel its tasks that have not ended with it (a bulk cancel).
        #[arg(long)]
        cancel_tasks: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make an API token. Prints the token alone on standard output, shown
    /// this once (remit keeps only its hash), and what it may do on
    /// standard error.
    Create {
        /// read (tasks and destinations), schedule (schedule tasks, read
        /// them) or admin (everything).
        #[arg(long)]
        scope: String,
        /// Only this tenant's tasks (repeat for several; not for admin).
        #[arg(long = "tenant", value_name = "TENANT")]
        tenants: Vec<String>,
        /// When it stops working: RFC 3339 (2027-01-01T00:00:00Z) or a
        /// time from now (90d, 12h).
        #[arg(long, value_name = "WHEN")]
        expires: Option<String>,
        /// A label for people.
        #[arg(long)]
        name: Option<String>,
    },
    /// List every token: id, name, scope, tenants, made, expires, revoked.
    /// Never a token's secret.
    List {
        #[arg(long, value_enum, default_value = "text")]
        format: ReportFormat,
    },
    /// Revoke a token by its id: refused from the next request on, in
    /// every process.
    Revoke {
        /// The token's id (tok_…), as `remit token list` shows it.
        id: String,
    },
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use remit_actors::config::NOT_CONFIGURATION_KEYS;

    use super::Cli;

    fn variables(command: &clap::Command, found: &mut Vec<String>) {
        for arg in command.get_arguments() {
            if let Some(name) = arg.get_env() {
                found.push(name.to_string_lossy().into_owned());
            }
        }
        for sub in command.get_subcommands() {
            variables(sub, found);
        }
    }

    /// A flag read from a `REMIT_` variable would otherwise also be read
    /// by the configuration loader as a key it does not know, and every
    /// command would refuse to start.
    #[test]
    fn every_variable_a_flag_reads_is_kept_out_of_the_configuration() {
        let mut found = Vec::new();
        variables(&Cli::command(), &mut found);
        assert!(found.iter().any(|name| name == "REMIT_CONFIG"));
        for name in found {
            let key = name.strip_prefix("REMIT_").unwrap_or(&name);
            assert!(
                NOT_CONFIGURATION_KEYS.contains(&key),
                "{name} is read by a flag, so the configuration must ignore it"
            );
        }
    }
}
