//! The export file's lines as serde reads and writes them: a header, then
//! a destination or a task per line (`destination_lines`, `task_lines`).

use serde::{Deserialize, Serialize};

use super::destination_lines::DestinationLine;
use super::task_lines::TaskLine;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum Line {
    Header { format: String },
    Destination(Box<DestinationLine>),
    Task(Box<TaskLine>),
}
