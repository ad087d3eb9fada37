//! The `remit` command line.
//!
//! # Layout
//! - `cli`: the commands, their flags and their exit statuses.

use std::process::ExitCode;

use clap::Parser;
use remit::error_chain;

mod cli;

use cli::{Cli, CliError};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli::dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Findings) => ExitCode::from(1),
        Err(e) => {
            eprintln!("remit: {}", error_chain(&e));
            ExitCode::from(e.exit_code())
        }
    }
}
