//! The `remit` command line.

use std::process::ExitCode;

use clap::Parser;
use remit::payload_crypto::PayloadKey;
use remit::store::Store;
use remit_actors::api::{CreateDestination, CreateTask, TaskRules};
use remit_actors::app::{self, AppError};
use remit_actors::config::Config;
use remit_actors::error_chain;
use remit_actors::schedule_file::ScheduleFileError;
use remit_actors::words::counted;

mod cli;

use cli::{Cli, Command, DestinationCommand, ReportFormat};

/// What went wrong in a command, with its exit status.
#[derive(Debug, thiserror::Error)]
enum CliError {
    #[error(transparent)]
    App(#[from] AppError),
    #[error("{0}")]
    Usage(String),
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
    fn exit_code(&self) -> u8 {
        match self {
            CliError::App(e) => e.exit_code(),
            CliError::Usage(_) => 2,
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
            other => CliError::App(AppError::Store(other)),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Findings) => ExitCode::from(1),
        Err(e) => {
            eprintln!("remit: {}", error_chain(&e));
            ExitCode::from(e.exit_code())
        }
    }
}

fn dispatch(cli: Cli) -> Result<(), CliError> {
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
        other => actix_rt::System::new().block_on(one_shot(config, other)),
    };
    drop(fail);
    result
}

/// Commands that do one thing against the database and exit.
async fn one_shot(config: Config, command: Command) -> Result<(), CliError> {
    match command {
        Command::Demo { database_url } => Ok(remit_actors::demo::run(config, database_url).await?),
        Command::Migrate => {
            let applied = remit::store::migrate(&config.database.url)
                .await
                .map_err(AppError::from)?;
            if applied.is_empty() {
                println!("schema is up to date");
            }
            for version in applied {
                println!("applied {version}");
            }
            Ok(())
        }
        Command::Destination(DestinationCommand::Add {
            id,
            region,
            url,
            secret,
        }) => {
            let new = CreateDestination::from_parts(id, region, url, secret)
                .validate()
                .map_err(|e| CliError::Usage(e.to_string()))?;
            config
                .egress()
                .map_err(AppError::from)?
                .admit(&new.url)
                .await
                .map_err(|e| CliError::Usage(e.to_string()))?;
            // Destinations hold no payloads; a throwaway key suffices when
            // none is configured.
            let key =
                app::payload_key(&config).unwrap_or_else(|_| PayloadKey::from_bytes(rand_key()));
            let store = app::connect(&config, key).await?;
            let destination = store.add_destination(new).await?;
            println!(
                "destination {} ({}) -> {}",
                destination.id, destination.region, destination.url
            );
            Ok(())
        }
        Command::Schedule {
            file: Some(file), ..
        } => schedule_file(&config, &file).await,
        Command::Schedule {
            file: None,
            tenant,
            reminder,
            destination,
            region,
            not_before,
            payload_file,
            payload,
        } => {
            let (Some(tenant), Some(reminder), Some(destination), Some(region), Some(not_before)) =
                (tenant, reminder, destination, region, not_before)
            else {
                return Err(CliError::Usage(
                    "--tenant, --reminder, --destination, --region and --not-before are required without --file".into(),
                ));
            };
            let payload = match (payload_file, payload) {
                (Some(path), _) => read_payload_file(&path)?,
                (None, Some(json)) => json,
                (None, None) => {
                    return Err(CliError::Usage(
                        "--payload or --payload-file is required".into(),
                    ))
                }
            };
            let rules = TaskRules {
                serving: config.region().map_err(AppError::from)?,
                allow_other_regions: true,
                horizon: config.retry_policy().horizon,
            };
            let new =
                CreateTask::from_parts(tenant, reminder, destination, region, not_before, &payload)
                    .and_then(|request| request.validate(&rules))
                    .map_err(|e| CliError::Usage(e.to_string()))?;
            let key = app::payload_key(&config)?;
            let store = app::connect_to_seal(&config, key).await?;
            let scheduled = store.schedule(new).await?;
            println!(
                "task {} idempotency_key {}{}",
                scheduled.task.id,
                scheduled.task.idempotency_key,
                if scheduled.created {
                    ""
                } else {
                    " (already scheduled)"
                }
            );
            Ok(())
        }
        Command::Reconcile {
            region,
            ledger,
            older_than,
            reclaim,
            format,
        } => {
            let region = region
                .map(|r| r.parse::<remit::domain::Region>())
                .transpose()
                .map_err(|e| CliError::Usage(e.to_string()))?;
            let ledger = ledger
                .map(|path| remit_actors::reconcile::read_ledger(&path))
                .transpose()
                .map_err(|e| CliError::Usage(error_chain(&e)))?;
            let request = remit::domain::ReconcileRequest {
                region,
                older_than: chrono::Duration::from_std(older_than)
                    .map_err(|_| CliError::Usage("--older-than: too long".into()))?,
                reclaim,
                ledger,
                list_limit: 1000,
            };
            // Reports name tasks, never payloads; a throwaway key suffices.
            let key =
                app::payload_key(&config).unwrap_or_else(|_| PayloadKey::from_bytes(rand_key()));
            let store = app::connect(&config, key)
                .await
                .map_err(CliError::CouldNotCheck)?;
            let report = store
                .reconcile(&request)
                .await
                .map_err(|e| CliError::CouldNotCheck(AppError::Store(e)))?;
            match format {
                ReportFormat::Text => print!("{}", remit_actors::reconcile::to_text(&report)),
                ReportFormat::Json => println!("{}", remit_actors::reconcile::to_json(&report)),
            }
            if report.is_clean() {
                Ok(())
            } else {
                Err(CliError::Findings)
            }
        }
        Command::Prune { region, older_than } => {
            let region = region
                .map(|r| r.parse::<remit::domain::Region>())
                .transpose()
                .map_err(|e| CliError::Usage(e.to_string()))?;
            let older_than = older_than
                .map(chrono::Duration::from_std)
                .transpose()
                .map_err(|_| CliError::Usage("--older-than: too long".into()))?;
            let request = remit_actors::prune::request(&config, region, older_than);
            // Pruning never opens a payload; a throwaway key suffices.
            let key =
                app::payload_key(&config).unwrap_or_else(|_| PayloadKey::from_bytes(rand_key()));
            let store = app::connect(&config, key).await?;
            let report = store.prune(&request).await?;
            print!("{}", remit_actors::prune::to_text(&request, &report));
            Ok(())
        }
        Command::Status { region, format } => {
            let region = region
                .map(|r| r.parse::<remit::domain::Region>())
                .transpose()
                .map_err(|e| CliError::Usage(e.to_string()))?;
            // Status reads no payload; a throwaway key suffices.
            let key =
                app::payload_key(&config).unwrap_or_else(|_| PayloadKey::from_bytes(rand_key()));
            let store = app::connect(&config, key).await?;
            let report = store.status(region).await?;
            match format {
                ReportFormat::Text => print!(
                    "{}",
                    remit_actors::status::to_text(&report, &config.database_description())
                ),
                ReportFormat::Json => println!("{}", remit_actors::status::to_json(&report)),
            }
            Ok(())
        }
        Command::Export { file } => {
            // Payloads travel sealed; no key is needed to export them.
            let key =
                app::payload_key(&config).unwrap_or_else(|_| PayloadKey::from_bytes(rand_key()));
            let store = app::connect(&config, key).await?;
            let flag = format!("--file {}", file.display());
            let mut out: Box<dyn std::io::Write> = if file.as_os_str() == "-" {
                Box::new(std::io::BufWriter::new(std::io::stdout().lock()))
            } else {
                let created = std::fs::File::create(&file)
                    .map_err(|e| CliError::Usage(format!("{flag}: {e}")))?;
                Box::new(std::io::BufWriter::new(created))
            };
            let counts = remit_actors::transfer::export(&store, &mut out)
                .await
                .map_err(|e| CliError::Usage(format!("{flag}: {}", error_chain(&e))))?;
            eprintln!(
                "exported {} and {} from {}",
                counted(counts.destinations as u64, "destination"),
                counted(counts.tasks as u64, "task"),
                config.database_description()
            );
            Ok(())
        }
        Command::Import { file } => {
            let key =
                app::payload_key(&config).unwrap_or_else(|_| PayloadKey::from_bytes(rand_key()));
            let store = app::connect(&config, key).await?;
            let flag = format!("--file {}", file.display());
            let mut input: Box<dyn std::io::BufRead> = if file.as_os_str() == "-" {
                Box::new(std::io::BufReader::new(std::io::stdin()))
            } else {
                let opened = std::fs::File::open(&file)
                    .map_err(|e| CliError::Usage(format!("{flag}: {e}")))?;
                Box::new(std::io::BufReader::new(opened))
            };
            let report = remit_actors::transfer::import(&store, &mut input)
                .await
                .map_err(|e| match e {
                    remit_actors::transfer::TransferError::Store(e) => CliError::from(e),
                    e => CliError::Usage(format!("{flag}: {}", error_chain(&e))),
                })?;
            println!(
                "imported into {}: {} destinations added ({} already there), {} tasks added ({} already there)",
                config.database_description(),
                report.destinations.added,
                report.destinations.already,
                report.tasks.added,
                report.tasks.already
            );
            Ok(())
        }
        Command::Keygen | Command::Run { .. } => Ok(()),
    }
}

/// `remit schedule --file`: exit 0 when every line was scheduled (or was
/// already), 1 when any was refused, each refusal printed with its line.
async fn schedule_file(config: &Config, path: &std::path::Path) -> Result<(), CliError> {
    let flag = format!("--file {}", path.display());
    let input: Box<dyn std::io::BufRead> = if path.as_os_str() == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        let file =
            std::fs::File::open(path).map_err(|e| CliError::Usage(format!("{flag}: {e}")))?;
        Box::new(std::io::BufReader::new(file))
    };
    let rules = TaskRules {
        serving: config.region().map_err(AppError::from)?,
        allow_other_regions: true,
        horizon: config.retry_policy().horizon,
    };
    let key = app::payload_key(config)?;
    let store = app::connect_to_seal(config, key).await?;
    let tally =
        remit_actors::schedule_file::schedule_lines(&store, &rules, input, |(line, text)| {
            println!("line {line}: {text}");
        })
        .await
        .map_err(|e| match e {
            ScheduleFileError::Store(e) => {
                eprintln!("{flag}: {}", error_chain(&e));
                CliError::App(AppError::Store(e))
            }
            e => CliError::Usage(format!("{flag}: {}", error_chain(&e))),
        })?;
    println!(
        "{} scheduled, {} already scheduled, {} refused",
        tally.created, tally.repeated, tally.refused
    );
    if tally.refused > 0 {
        return Err(CliError::Refused(tally.refused));
    }
    Ok(())
}

/// The payload from `--payload-file PATH`, or from standard input for `-`.
fn read_payload_file(path: &std::path::Path) -> Result<String, CliError> {
    use std::io::Read;
    let flag = format!("--payload-file {}", path.display());
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::Usage(format!("{flag}: cannot read standard input ({e})")))?;
    } else {
        bytes = std::fs::read(path).map_err(|e| CliError::Usage(format!("{flag}: {e}")))?;
    }
    String::from_utf8(bytes)
        .map_err(|_| CliError::Usage(format!("{flag}: the payload must be UTF-8 JSON")))
}

fn rand_key() -> [u8; 32] {
    rand::random()
}
