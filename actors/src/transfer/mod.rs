//! `remit export` and `remit import`: a schedule as JSON lines, so a
//! deployment can move between stores (SQLite to PostgreSQL, say) without
//! losing a webhook or a key.
//!
//! The first line names the format; then one line per destination, then
//! one per task with its sealed payload (base64, still encrypted) and its
//! attempt log. Destinations' signing secrets travel sealed as well, so
//! the file holds neither health data nor a secret in clear; `remit
//! export` still writes it readable by its owner only. Ids, idempotency keys,
//! states, leases and attempt numbers travel as they are (see
//! `remit::store::transfer`). An import checks every line before it writes
//! anything (`remit::store::check_imported_task`).
//!
//! # Layout
//! - `lines`: the file's lines as serde reads and writes them;
//!   `destination_lines` and `task_lines`: a destination's and a task's,
//!   and their conversion to and from the store's records.
//! - `header_lines`: a destination's custom header as a line carries it
//!   (a sealed value stays sealed).

use std::io::{BufRead, Write};

use remit::domain::InvalidInput;
use remit::store::Transfer;
use remit::store::{
    check_imported_destination, Database, DestinationRecord, ImportCheck, Imported, StoreError,
    TaskRecord,
};

mod destination_lines;
mod header_lines;
mod lines;
mod task_lines;

use destination_lines::{destination_line, destination_record};
use lines::Line;
use task_lines::{task_line, task_record};

/// The first line's `format`, so a file from another tool is refused.
/// Version 2 carries signing secrets sealed (`signing_secrets`); files of
/// version 1, with `signing_secret` in clear, still import.
const FORMAT: &str = "remit-export/2";
const FORMATS_READ: [&str; 2] = ["remit-export/1", FORMAT];
/// Tasks per page read from the store, and per transaction on import.
const PAGE: u32 = 500;

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("could not write the export")]
    Write(#[source] std::io::Error),
    #[error("could not read line {line}")]
    Read {
        line: usize,
        #[source]
        source: std::io::Error,
    },
    #[error("line {line}: {reason}")]
    Format { line: usize, reason: String },
    /// A signing secret still in clear: exports carry secrets sealed only.
    #[error("{reason}")]
    Unsealed { reason: String },
    /// A row that breaks one of the schedule's invariants; nothing of the
    /// import was written.
    #[error("line {line}")]
    Invalid {
        line: usize,
        #[source]
        source: InvalidInput,
    },
}

/// How many of each an export wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exported {
    pub destinations: u64,
    pub tasks: u64,
}

/// Writes the whole schedule to `out`.
pub async fn export(store: &Database, out: &mut dyn Write) -> Result<Exported, TransferError> {
    let mut counts = Exported::default();
    write_line(
        out,
        &Line::Header {
            format: FORMAT.into(),
        },
    )?;
    for record in store.export_destinations().await? {
        let line = destination_line(record).map_err(|reason| TransferError::Unsealed { reason })?;
        write_line(out, &Line::Destination(Box::new(line)))?;
        counts.destinations += 1;
    }
    let mut after = None;
    loop {
        let page = store.export_tasks(after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = Some(last.task.id);
        for record in page {
            write_line(out, &Line::Task(Box::new(task_line(record))))?;
            counts.tasks += 1;
        }
    }
    out.flush().map_err(TransferError::Write)?;
    Ok(counts)
}

/// What an import did, destinations and tasks apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportReport {
    pub destinations: Imported,
    pub tasks: Imported,
}

/// Reads an export from `input` into `store`. The whole file is read and
/// every line checked first (its format, and each row against the
/// schedule's invariants, `remit::store::check_imported_task`): a bad line stops the
/// import with its line number and field, and nothing at all is written.
/// Then destinations go in one transaction and tasks a page per
/// transaction. A task already there is left as it is, so an import that
/// a conflict or a failure stopped halfway can simply be run again.
pub async fn import(
    store: &Database,
    input: &mut dyn BufRead,
) -> Result<ImportReport, TransferError> {
    let (destinations, tasks) = read(input)?;
    let mut report = ImportReport::default();
    if !destinations.is_empty() {
        report.destinations = store.import_destinations(destinations).await?;
    }
    let mut tasks = tasks.into_iter().peekable();
    while tasks.peek().is_some() {
        let page: Vec<TaskRecord> = tasks.by_ref().take(PAGE as usize).collect();
        add(&mut report.tasks, store.import_tasks(page).await?);
    }
    Ok(report)
}

/// Every record of the export, each line checked; nothing is written.
fn read(
    input: &mut dyn BufRead,
) -> Result<(Vec<DestinationRecord>, Vec<TaskRecord>), TransferError> {
    let mut destinations = Vec::new();
    let mut tasks = Vec::new();
    let mut check = ImportCheck::new("line");
    let mut seen_header = false;
    for (index, text) in input.lines().enumerate() {
        let line = index + 1;
        let text = text.map_err(|source| TransferError::Read { line, source })?;
        if text.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(&text).map_err(|e| TransferError::Format {
            line,
            reason: e.to_string(),
        })?;
        let invalid = |source| TransferError::Invalid { line, source };
        match parsed {
            Line::Header { format } if FORMATS_READ.contains(&format.as_str()) && !seen_header => {
                seen_header = true
            }
            Line::Header { format } => {
                return Err(TransferError::Format {
                    line,
                    reason: format!("format {format:?} where {FORMAT:?} was expected once, first"),
                })
            }
            _ if !seen_header => {
                return Err(TransferError::Format {
                    line,
                    reason: format!("the first line must name the format {FORMAT:?}"),
                })
            }
            Line::Destination(d) => {
                if !tasks.is_empty() {
                    return Err(TransferError::Format {
                        line,
                        reason: "destinations must come before tasks".into(),
                    });
                }
                let record = destination_record(*d)
                    .map_err(|reason| TransferError::Format { line, reason })?;
                check_imported_destination(&record).map_err(invalid)?;
                destinations.push(record);
            }
            Line::Task(t) => {
                let record =
                    task_record(*t).map_err(|reason| TransferError::Format { line, reason })?;
                check.task(&record, line).map_err(invalid)?;
                tasks.push(record);
            }
        }
    }
    if !seen_header {
        return Err(TransferError::Format {
            line: 1,
            reason: format!("empty: an export starts with the format {FORMAT:?}"),
        });
    }
    Ok((destinations, tasks))
}

fn add(total: &mut Imported, more: Imported) {
    total.added += more.added;
    total.already += more.already;
}

fn write_line(out: &mut dyn Write, line: &Line) -> Result<(), TransferError> {
    let text = serde_json::to_string(line).map_err(|e| TransferError::Write(e.into()))?;
    writeln!(out, "{text}").map_err(TransferError::Write)
}
