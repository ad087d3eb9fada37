//! How a listing command prints: a table for people, or JSON for scripts.
//! Its own file because both the flags (`args`) and the commands that print
//! (`audit`, `tasks`, `token`) name it.

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ReportFormat {
    // Aligned columns, for a terminal.
    Text,
    // The API's JSON body, for a script.
    Json,
}
