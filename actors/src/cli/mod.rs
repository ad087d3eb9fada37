//! The `remit` command line: its flags (`args`), its errors and exit
//! statuses, and one file per command that does one thing against the
//! database and exits (`remit run`, `remit console` and `remit demo` live
//! in the library).
//!
//! # Layout
//! - `error`: what went wrong in a command, and its exit status.
//! - `connect`: the database, as the user who runs the command acts
//!   (`acting_user`: the uid's user, or `--as`); `flags` the reading of
//!   flags several commands share.
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

mod acting_user;
mod args;
mod audit;
mod connect;
mod destination;
mod destination_args;
mod destination_settings;
mod error;
mod flags;
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

use remit::payload_crypto::PayloadKey;
use remit_actors::api::CreateDestination;
use remit_actors::app::{self, AppError};
use remit_actors::config::Config;

pub use args::Cli;
use args::{Command, DestinationCommand, TokenCommand};
pub use error::CliError;

/// Runs the command line's command.
pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    let fail = remit_actors::runtime::failpoint::setup();
    acting_user::choose(cli.as_user.as_deref())?;
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
        Command::Demo {
            database_url,
            give_up_after,
        } => Ok(remit_actors::demo::run(config, database_url, give_up_after).await?),
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
