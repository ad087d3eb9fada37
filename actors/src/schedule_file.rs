//! `remit schedule --file tasks.jsonl`: many webhooks from a file (or
//! standard input), one JSON object per line shaped like POST /v1/tasks,
//! scheduled a thousand at a time through `Schedule::schedule_many`. Each
//! line gets its own answer; a bad line never stops its neighbours.

use std::io::BufRead;

use remit::domain::NewTask;
use remit::store::{Store, StoreError};

use crate::api::horizons::Horizons;
use crate::api::{read_object, CreateTask, TaskRules};

/// Lines per `schedule_many` call.
const BATCH: usize = 1_000;

/// What happened to the lines of a file.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub created: usize,
    pub repeated: usize,
    pub refused: usize,
}

/// A line number and what became of it, as printed.
pub type Report = (usize, String);

/// Reads `input` line by line and schedules what it holds, calling
/// `report` with each line's outcome in order. Only a store failure stops
/// it (what was committed before stays committed).
pub async fn schedule_lines<S: Store>(
    store: &S,
    rules: &TaskRules,
    input: impl BufRead,
    mut report: impl FnMut(Report),
) -> Result<Tally, ScheduleFileError> {
    let mut tally = Tally::default();
    // Lines read and not yet answered, with what reading them gave; the
    // answers go out in line order.
    let mut pending: Vec<(usize, Read)> = Vec::with_capacity(BATCH);
    for (index, line) in input.lines().enumerate() {
        let number = index + 1;
        let line = line.map_err(|e| ScheduleFileError::Read {
            line: number,
            source: e,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        pending.push((number, read(&line, rules)));
        if pending.len() == BATCH {
            flush(store, &mut pending, &mut tally, &mut report).await?;
        }
    }
    flush(store, &mut pending, &mut tally, &mut report).await?;
    Ok(tally)
}

/// A line's task and whether it named its own horizon, or why it was
/// refused.
type Read = Result<(NewTask, bool), String>;

/// A line's task, and whether it named its own horizon.
fn read(line: &str, rules: &TaskRules) -> Read {
    // Read as the API reads a body: an object only, errors naming the field.
    let task: CreateTask = read_object(line).map_err(|e| {
        let error = e.body().error;
        match error.field {
            Some(field) => format!("{field}: {}", error.message),
            None => error.message,
        }
    })?;
    let named = task.names_horizon();
    task.validate(rules)
        .map(|new| (new, named))
        .map_err(|e| e.to_string())
}

async fn flush<S: Store>(
    store: &S,
    pending: &mut Vec<(usize, Read)>,
    tally: &mut Tally,
    report: &mut impl FnMut(Report),
) -> Result<(), ScheduleFileError> {
    let lines = std::mem::take(pending);
    let mut batch: Vec<(NewTask, bool)> = lines
        .iter()
        .filter_map(|(_, read)| read.as_ref().ok().cloned())
        .collect();
    Horizons::default()
        .apply(store, &mut batch)
        .await
        .map_err(ScheduleFileError::Store)?;
    let batch = batch.into_iter().map(|(new, _)| new).collect();
    let mut answers = store
        .schedule_many(batch)
        .await
        .map_err(ScheduleFileError::Store)?
        .into_iter();
    for (number, read) in lines {
        let text = match read.map(|_| answers.next()) {
            Err(reason) => {
                tally.refused += 1;
                format!("refused: {reason}")
            }
            Ok(Some(Ok(scheduled))) if scheduled.created => {
                tally.created += 1;
                format!(
                    "task {} idempotency_key {}",
                    scheduled.task.id, scheduled.task.idempotency_key
                )
            }
            Ok(Some(Ok(scheduled))) => {
                tally.repeated += 1;
                format!(
                    "task {} idempotency_key {} (already scheduled)",
                    scheduled.task.id, scheduled.task.idempotency_key
                )
            }
            Ok(Some(Err(e))) => {
                tally.refused += 1;
                format!("refused: {}", remit::error_chain(&e))
            }
            // The store answers every task it is given.
            Ok(None) => {
                tally.refused += 1;
                "refused: no answer from the store".to_owned()
            }
        };
        report((number, text));
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum ScheduleFileError {
    #[error("line {line}: cannot read it")]
    Read {
        line: usize,
        #[source]
        source: std::io::Error,
    },
    #[error("the store failed; lines before the last batch are scheduled")]
    Store(#[source] StoreError),
}
