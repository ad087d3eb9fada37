//! The `remit` command line: its flags (`args`), its errors and exit
//! statuses, and one file per command that does one thing against the
//! database and exits (`remit run`, `remit console` and `remit demo` live
//! in the library).
//!
//! # Layout
//! - `args`: the commands and flags, as clap reads them; `task_args` the
//!   flags of the task commands, `report_format` the text-or-JSON choice the
//!   listing commands share.
//! - `destination` (add, enable, disable, secrets) and
//!   `destination_settings` (set, show, delete; their flags are
//!   `destination_args`).
//! - `migrate`, `schedule`, `reconcile`, `prune`, `status`,
//!   `rekey`, `transfer` (export and import), `token` (create, list,
//!   revoke), `replay` (bulk replay by filter, and the bulk cancel of
//!   `cancel --filter`), `audit` (the audit log of admin actions), `tasks`
//!   (a page of tasks) and `task_changes` (cancel, reschedule, erase,
//!   retry-now): one command each.

mod args;
mod audit;
mod destination;
mod destination_args;
mod destination_settings;
mod migrate;
mod prune;
mod reconcile;
mod rekey;
mod replay;
mod report_format;
mod schedule;
mod status;
mod task_args;
mod task_changes;
mod tasks;
mod token;
mod transfer;

use remit::domain::Actor;
use remit::payload_crypto::PayloadKey;
use remit::store::Database;
use remit_actors::api::CreateDestination;
use remit_actors::app::{self, AppError};
use remit_actors::config::Config;
use remit_actors::words::counted;

pub use args::Cli;
use args::{Command, DestinationCommand, TokenCommand};

/// What went wrong in a command, with its exit status.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    App(#[from] AppError),
    #[error("{0}")]
    Usage(String),
    /// The store's answer about the data (a conflict with what is stored,
    /// no such row): the command was refused, the database did not fail,
    /// so it reads as itself (`conflict: …`), not under `database`.
    #[error(transparent)]
    Rejected(remit::store::StoreError),
    /// Reconciliation found something; the report says what.
    #[error("reconciliation found work that needs attention")]
    Findings,
    /// Reconciliation could not look (exit 3, so cron can tell "something
    /// is wrong with the schedule" from "could not check").
    #[error("reconciliation could not run")]
    CouldNotCheck(#[source] AppError),
    /// Some lines of `remit schedule --file` were refused (each printed).
    #[error("refused {} (each is named above)", counted(*.0 as u64, "task"))]
    Refused(usize),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::App(e) => e.exit_code(),
            CliError::Usage(_) => 2,
            CliError::Rejected(_) => 1,
            CliError::Findings => 1,
            CliError::CouldNotCheck(_) => 3,
            CliError::Refused(_) => 1,
        }
    }
}

impl From<remit::store::StoreError> for CliError {
    fn from(e: remit::store::StoreError) -> Self {
        match e {
            remit::store::StoreError::Invalid(invalid) => CliError::Usage(invalid.to_string()),
            e @ (remit::store::StoreError::Conflict { .. }
            | remit::store::StoreError::InUse { .. }
            | remit::store::StoreError::NotFound { .. }) => CliError::Rejected(e),
            other => CliError::App(AppError::Store(other)),
        }
    }
}

/// Runs the command line's command.
pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    let fail = remit_actors::runtime::failpoint::setup();
    let mut config = Config::load(cli.config.as_deref()).map_err(AppError::from)?;
    let result = match cli.command {
        Command::Keygen => {
            println!("{}", PayloadKey::generate_base64());
            Ok(())
        }
        Command::Run { region } => {
            if let Some(region) = region {
                config.region = region;
                config.region().map_err(AppError::from)?;
            }
            app::run(config).map_err(CliError::from)
        }
        Command::Console { bind, region } => {
            if let Some(region) = region {
                config.region = region;
                config.region().map_err(AppError::from)?;
            }
            app::run_console(config, bind).map_err(CliError::from)
        }
        other => actix_rt::System::new().block_on(one_shot(config, other)),
    };
    drop(fail);
    result
}

/// Commands that do one thing against the database and exit.
async fn one_shot(config: Config, command: Command) -> Result<(), CliError> {
    match command {
        Command::Demo { database_url } => Ok(remit_actors::demo::run(config, database_url).await?),
        Command::Migrate { give_up_after } => migrate::run(&config, give_up_after).await,
        Command::Destination(DestinationCommand::Add {
            id,
            region,
            url,
            secret,
            disable_after_seconds,
            disable_after_failures,
        }) => {
            let request = CreateDestination::from_parts(id, region, url, secret)
                .with_thresholds(disable_after_seconds, disable_after_failures);
            destination::add(&config, request).await
        }
        Command::Destination(DestinationCommand::Disable { id, reason }) => {
            destination::disable(&config, id, reason).await
        }
        Command::Destination(DestinationCommand::Enable { id }) => {
            destination::enable(&config, id).await
        }
        Command::Destination(DestinationCommand::RotateSecret {
            id,
            secret,
            old_expires_at,
        }) => destination::rotate_secret(&config, id, secret, old_expires_at).await,
        Command::Destination(DestinationCommand::Secrets { id }) => {
            destination::secrets(&config, id).await
        }
        Command::Destination(DestinationCommand::Set(args)) => {
            destination_settings::set(&config, args).await
        }
        Command::Destination(DestinationCommand::Show { id }) => {
            destination_settings::show(&config, id).await
        }
        Command::Destination(DestinationCommand::Delete { id, cancel_tasks }) => {
            destination_settings::delete(&config, id, cancel_tasks).await
        }
        Command::Schedule(args) => schedule::run(&config, args).await,
        Command::Token(TokenCommand::Create {
            scope,
            tenants,
            expires,
            name,
        }) => token::create(&config, scope, tenants, expires, name).await,
        Command::Token(TokenCommand::List { format }) => token::list(&config, format).await,
        Command::Token(TokenCommand::Revoke { id }) => token::revoke(&config, &id).await,
        Command::Reconcile {
            region,
            ledger,
            older_than,
            reclaim,
            format,
        } => reconcile::run(&config, region, ledger, older_than, reclaim, format).await,
        Command::Replay {
            filters,
            job,
            region,
        } => replay::run(&config, filters, job, region).await,
        Command::Prune { region, older_than } => prune::run(&config, region, older_than).await,
        Command::Status { region, format } => status::run(&config, region, format).await,
        Command::Rekey { batch } => rekey::run(&config, batch).await,
        Command::Export { file } => transfer::export(&config, &file).await,
        Command::Import { file } => transfer::import(&config, &file).await,
        Command::Cancel(args) => task_changes::cancel(&config, args).await,
        Command::Reschedule {
            task,
            not_before,
            payload_file,
            payload,
        } => task_changes::reschedule(&config, task, not_before, payload_file, payload).await,
        Command::Erase(args) => task_changes::erase(&config, args).await,
        Command::RetryNow {
            destination,
            tenant,
        } => task_changes::retry_now(&config, destination, tenant).await,
        Command::Tasks(args) => tasks::run(&config, args).await,
        Command::Audit(args) => audit::run(&config, args).await,
        Command::Keygen | Command::Run { .. } | Command::Console { .. } => Ok(()),
    }
}

/// Connects for a command that opens no payload: the configured key when
/// there is one, else a throwaway one.
/// Every command acts as the operating-system user who runs it: its admin
/// calls are recorded in the audit log as `cli` and that user.
async fn connect_without_payloads(config: &Config) -> Result<Database, AppError> {
    let key = app::payload_key(config).unwrap_or_else(|_| PayloadKey::from_bytes(rand::random()));
    Ok(app::connect(config, key)
        .await?
        .acting_as(Actor::cli_user()))
}

/// Connects for a command that seals (`app::connect_to_seal`), acting as
/// the user who runs it, as [`connect_without_payloads`] does.
async fn connect_to_seal(config: &Config, key: PayloadKey) -> Result<Database, AppError> {
    Ok(app::connect_to_seal(config, key)
        .await?
        .acting_as(Actor::cli_user()))
}

/// `--region`, when given, as a region.
fn region_flag(region: Option<String>) -> Result<Option<remit::domain::Region>, CliError> {
    region
        .map(|r| r.parse::<remit::domain::Region>())
        .transpose()
        .map_err(|e| CliError::Usage(e.to_string()))
}

/// The file a `--file`-like flag names, or standard input for `-`.
fn open_input(path: &std::path::Path, flag: &str) -> Result<Box<dyn std::io::BufRead>, CliError> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(std::io::BufReader::new(std::io::stdin())));
    }
    let file = std::fs::File::open(path).map_err(|e| CliError::Usage(format!("{flag}: {e}")))?;
    Ok(Box::new(std::io::BufReader::new(file)))
}
