//! What went wrong in a command, and the exit status each cause gives.

use remit_actors::app::AppError;
use remit_actors::words::counted;

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
    /// Nothing matched what the command named (exit 1, as a refusal):
    /// the message says what was looked for, in the command's words.
    #[error("{0}")]
    NoMatch(String),
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
            CliError::NoMatch(_) => 1,
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
