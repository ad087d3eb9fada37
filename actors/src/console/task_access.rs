//! Which task a console request may touch: the task page and every change
//! made from it look the task up the same way, so a task of another region
//! or of a tenant the viewer may not see reads as one that does not exist.

use remit::domain::{Task, TaskId};
use remit::store::Schedule;

use super::error::ConsoleError;
use super::session::Viewer;
use super::state::ConsoleState;

/// The task, if it is this region's and the viewer may see its tenant:
/// any other is answered as one that does not exist.
pub(super) async fn own_task(
    state: &ConsoleState,
    viewer: &Viewer,
    raw: &str,
) -> Result<Task, ConsoleError> {
    let missing =
        || ConsoleError::NotFound(format!("no task with id {}", remit::domain::quoted(raw)));
    let id = uuid::Uuid::parse_str(raw)
        .map(TaskId)
        .map_err(|_| missing())?;
    state
        .store
        .task(id)
        .await?
        .filter(|t| t.region == state.region && viewer.caller.sees_tenant(&t.tenant_id))
        .ok_or_else(missing)
}
