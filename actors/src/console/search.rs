//! The task search form: its fields as typed, what they filter (a
//! tenant-limited token only ever its tenants), and the next page's link.
//! The task list and the bulk replay form both read it.

use chrono::{DateTime, NaiveDateTime, Utc};
use remit::domain::{ApiToken, DestinationId, ReminderId, TaskId, TaskState, TenantId};
use remit::store::console::TaskFilter;
use serde::Deserialize;

use super::error::ConsoleError;
use crate::api::Caller;

/// The search form's fields, as typed (blank is "any").
#[derive(Debug, Default, Deserialize)]
pub struct Search {
    pub id: Option<String>,
    pub tenant: Option<String>,
    pub reminder: Option<String>,
    pub destination: Option<String>,
    pub state: Option<String>,
    pub from: Option<String>,
    pub until: Option<String>,
    pub before: Option<String>,
    /// Only carried to the bulk replay form (a failure reason).
    pub reason: Option<String>,
}

impl Search {
    /// The field's value, trimmed, when not blank.
    pub fn get(field: &Option<String>) -> Option<&str> {
        field.as_deref().map(str::trim).filter(|v| !v.is_empty())
    }

    pub fn filter(&self, caller: &Caller) -> Result<TaskFilter, ConsoleError> {
        // A reminder id names a reminder within its tenant only; searched
        // alone it would also need an index of its own on every task.
        if Self::get(&self.reminder).is_some() && Self::get(&self.tenant).is_none() {
            return Err(ConsoleError::bad(
                "reminder",
                "needs the tenant too: a reminder id is unique only within its tenant",
            ));
        }
        Ok(TaskFilter {
            id: Self::get(&self.id).map(|v| task_id(v, "id")).transpose()?,
            tenant: Self::get(&self.tenant).map(TenantId::new).transpose()?,
            reminder: Self::get(&self.reminder).map(ReminderId::new).transpose()?,
            destination: Self::get(&self.destination)
                .map(DestinationId::new)
                .transpose()?,
            state: Self::get(&self.state).map(task_state).transpose()?,
            from: Self::get(&self.from).map(|v| time(v, "from")).transpose()?,
            until: Self::get(&self.until)
                .map(|v| time(v, "until"))
                .transpose()?,
            only_tenants: match caller {
                Caller::Token(ApiToken {
                    tenants: Some(tenants),
                    ..
                }) => Some(tenants.clone()),
                _ => None,
            },
        })
    }

    /// This search's query string with `before` set to `next`.
    pub fn next_page(&self, next: TaskId) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in [
            ("id", &self.id),
            ("tenant", &self.tenant),
            ("reminder", &self.reminder),
            ("destination", &self.destination),
            ("state", &self.state),
            ("from", &self.from),
            ("until", &self.until),
        ] {
            if let Some(value) = Self::get(value) {
                query.append_pair(name, value);
            }
        }
        query.append_pair("before", &next.0.to_string());
        format!("/console/tasks?{}", query.finish())
    }
}

/// A task id as typed in `field`.
pub fn task_id(text: &str, field: &'static str) -> Result<TaskId, ConsoleError> {
    uuid::Uuid::parse_str(text)
        .map(TaskId)
        .map_err(|_| ConsoleError::bad(field, "must be a task id (a UUID)"))
}

fn task_state(text: &str) -> Result<TaskState, ConsoleError> {
    TaskState::from_label(text).ok_or_else(|| {
        ConsoleError::bad(
            "state",
            "must be one of pending, leased, retry_wait, delivered, failed, cancelled",
        )
    })
}

/// RFC 3339, or what a browser's date-and-time field sends
/// (`2026-12-04T09:30`, taken as UTC).
pub fn time(text: &str, field: &'static str) -> Result<DateTime<Utc>, ConsoleError> {
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Ok(at.with_timezone(&Utc));
    }
    ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"]
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(text, format).ok())
        .map(|at| at.and_utc())
        .ok_or_else(|| {
            ConsoleError::bad(
                field,
                "must be a time such as 2026-12-04T09:30:00Z (RFC 3339) or 2026-12-04T09:30 (UTC)",
            )
        })
}
