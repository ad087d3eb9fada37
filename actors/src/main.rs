//! The `remit` command line.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The database used when neither `--database-url` nor `DATABASE_URL` says
/// otherwise: the local PostgreSQL of a development machine.
const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

#[derive(Debug, Parser)]
#[command(
    name = "remit",
    version,
    about = "Durable, rate-limited webhook delivery"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Apply the embedded schema migrations.
    Migrate {
        #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL)]
        database_url: String,
    },
}

#[actix_rt::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Migrate { database_url } => match remit::store::migrate(&database_url).await {
            Ok(applied) if applied.is_empty() => {
                println!("schema is up to date");
                ExitCode::SUCCESS
            }
            Ok(applied) => {
                for version in applied {
                    println!("applied {version}");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("remit migrate: {}", error_chain(&e));
                ExitCode::FAILURE
            }
        },
    }
}

/// An error and its causes on one line.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
