//! GET /v1/tasks and GET /v1/destinations: what this region holds, a page
//! at a time. A tenant-limited token lists only its tenants' tasks.

use actix_web::{web, HttpResponse};
use remit::domain::{DestinationId, InvalidInput, ReminderId, TaskId, TaskState, TenantId};
use remit::store::console::{TaskFilter, MAX_PAGE};
use remit::store::Reports;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::caller::Caller;
use super::destinations::DestinationView;
use super::error::ApiError;
use super::error::ErrorBody;
use super::replays::instant;
use super::state::ApiState;
use super::task_views::TaskFields;

/// A page when `limit` is not given.
const DEFAULT_PAGE: u32 = 50;

/// Which tasks to list; every parameter given narrows the list.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TaskQuery {
    /// Only this tenant's tasks.
    pub tenant_id: Option<String>,
    /// Only the task of this reminder id (with `tenant_id`).
    pub reminder_id: Option<String>,
    /// Only this destination's tasks.
    pub destination_id: Option<String>,
    /// Only tasks in this state: `pending`, `leased`, `retry_wait`,
    /// `delivered`, `failed` or `cancelled`.
    pub state: Option<String>,
    /// Only tasks due (`not_before`) at or after this instant, RFC 3339.
    #[param(format = DateTime)]
    pub from: Option<String>,
    /// Only tasks due (`not_before`) before this instant, RFC 3339.
    #[param(format = DateTime)]
    pub until: Option<String>,
    /// The `next` of the page before: tasks scheduled before this one.
    #[param(format = Uuid)]
    pub before: Option<String>,
    /// At most this many tasks, 1 to 500 (50 when absent).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u32>,
}

impl TaskQuery {
    /// The search the parameters ask for, every one checked (an error
    /// names it): the filter, the cursor and the page's size. Only
    /// `only_tenants`' tasks when given.
    pub fn filter(
        &self,
        only_tenants: Option<Vec<TenantId>>,
    ) -> Result<(TaskFilter, Option<TaskId>, u32), InvalidInput> {
        let state = self
            .state
            .as_deref()
            .map(|s| {
                TaskState::from_label(s).ok_or_else(|| {
                    InvalidInput::new(
                        "state",
                        "must be pending, leased, retry_wait, delivered, failed or cancelled",
                    )
                })
            })
            .transpose()?;
        let before = self
            .before
            .as_deref()
            .map(|b| {
                uuid::Uuid::parse_str(b)
                    .map(TaskId)
                    .map_err(|_| InvalidInput::new("before", "must be a task id (a UUID)"))
            })
            .transpose()?;
        if self.reminder_id.is_some() && self.tenant_id.is_none() {
            // A reminder id is unique only within a tenant, and no index
            // serves it alone.
            return Err(InvalidInput::new(
                "reminder_id",
                "needs tenant_id: a reminder id is unique within its tenant",
            ));
        }
        let limit = self.limit.unwrap_or(DEFAULT_PAGE);
        if !(1..=MAX_PAGE).contains(&limit) {
            return Err(InvalidInput::new(
                "limit",
                format!("must be from 1 to {MAX_PAGE}"),
            ));
        }
        let filter = TaskFilter {
            id: None,
            tenant: self.tenant_id.as_deref().map(TenantId::new).transpose()?,
            reminder: self
                .reminder_id
                .as_deref()
                .map(ReminderId::new)
                .transpose()?,
            destination: self
                .destination_id
                .as_deref()
                .map(DestinationId::new)
                .transpose()?,
            state,
            from: self
                .from
                .as_deref()
                .map(|t| instant("from", t))
                .transpose()?,
            until: self
                .until
                .as_deref()
                .map(|t| instant("until", t))
                .transpose()?,
            only_tenants,
        };
        Ok((filter, before, limit))
    }
}

/// A page of tasks, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskList {
    pub tasks: Vec<TaskFields>,
    /// Pass as `before` for the next page; `null` on the last.
    #[schema(required = true, format = Uuid)]
    pub next: Option<uuid::Uuid>,
}

/// List tasks
///
/// This region's tasks that match every parameter given, newest first, a
/// page at a time: pass `next` as `before` for the next page. A token
/// limited to tenants sees only theirs. Never a payload.
#[utoipa::path(
    get,
    path = "/v1/tasks",
    operation_id = "list_tasks",
    tag = "tasks",
    params(TaskQuery),
    responses(
        (status = 200, description = "A page of tasks", body = TaskList),
        (status = 400, description = "A parameter this endpoint does not take, or not of its type", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope does not allow this", body = ErrorBody),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn tasks(
    state: web::Data<ApiState>,
    caller: Caller,
    query: web::Query<TaskQuery>,
) -> Result<HttpResponse, ApiError> {
    let only_tenants = match &caller {
        Caller::Token(token) => token.tenants.clone(),
        Caller::Bootstrap => None,
    };
    let (filter, before, limit) = query.filter(only_tenants)?;
    let page = state
        .store
        .search_tasks(state.rules.serving, &filter, before, limit)
        .await?;
    Ok(HttpResponse::Ok().json(TaskList {
        tasks: page.tasks.iter().map(TaskFields::from).collect(),
        next: page.next.map(|id| id.0),
    }))
}

/// Which destinations to list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DestinationQuery {
    /// The `next` of the page before: destinations after this id.
    after: Option<String>,
    /// At most this many destinations, 1 to 500 (50 when absent).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<u32>,
}

/// A page of destinations, by id.
#[derive(Debug, Serialize, ToSchema)]
pub struct DestinationList {
    pub destinations: Vec<DestinationView>,
    /// Pass as `after` for the next page; `null` on the last.
    #[schema(required = true)]
    pub next: Option<String>,
}

/// List destinations
///
/// This region's destinations by id (byte order), a page at a time: pass
/// `next` as `after` for the next page.
#[utoipa::path(
    get,
    path = "/v1/destinations",
    operation_id = "list_destinations",
    tag = "destinations",
    params(DestinationQuery),
    responses(
        (status = 200, description = "A page of destinations", body = DestinationList),
        (status = 400, description = "A parameter this endpoint does not take, or not of its type", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope does not allow this", body = ErrorBody),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn destinations(
    state: web::Data<ApiState>,
    query: web::Query<DestinationQuery>,
) -> Result<HttpResponse, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(InvalidInput::new("limit", format!("must be from 1 to {MAX_PAGE}")).into());
    }
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    // The region's destinations, by id (the console's list, read whole).
    let all = state
        .store
        .destination_summaries(state.rules.serving)
        .await?;
    // By the bytes of their ids, as `after` compares them, whatever the
    // database's collation ordered them by.
    let mut ids: Vec<_> = all.iter().map(|s| &s.destination).collect();
    ids.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));
    let mut page: Vec<DestinationView> = ids
        .into_iter()
        .filter(|d| {
            query
                .after
                .as_deref()
                .is_none_or(|after| d.id.as_str() > after)
        })
        .take(limit + 1)
        .map(DestinationView::from)
        .collect();
    let next = (page.len() > limit).then(|| {
        page.truncate(limit);
        page.last().map(|d| d.id.clone())
    });
    Ok(HttpResponse::Ok().json(DestinationList {
        destinations: page,
        next: next.flatten(),
    }))
}
