//! What a console page cannot show, and why (the page a person gets
//! instead, with its status, is drawn by `layout`).

use remit::store::StoreError;

/// What a page cannot show, as an HTML page with the right status.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// No session, an expired one, or its token is no longer good: the
    /// sign-in form.
    #[error("sign in to continue")]
    NotSignedIn,
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{field}: {message}")]
    BadRequest {
        field: &'static str,
        message: String,
    },
    #[error("{0}")]
    Conflict(String),
    #[error("the database did not answer; try again")]
    Unavailable(#[source] StoreError),
    /// Anything else the store refused to answer: the cause is logged
    /// (`failures`), the page says only that it failed.
    #[error("remit could not answer this page; its log says why")]
    Internal(#[source] StoreError),
}

impl ConsoleError {
    pub fn bad(field: &'static str, message: impl Into<String>) -> Self {
        Self::BadRequest {
            field,
            message: message.into(),
        }
    }

    /// What a form's POST gets without the session's CSRF value, or from a
    /// token that may not act.
    pub fn may_not_act() -> Self {
        Self::Forbidden("this token may look but not act: actions need an admin token".into())
    }
}

impl From<StoreError> for ConsoleError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { what, id } => Self::NotFound(format!("no {what} {id}")),
            StoreError::Invalid(invalid) => Self::BadRequest {
                field: invalid.field,
                message: invalid.reason,
            },
            StoreError::Conflict { .. } | StoreError::InUse { .. } => Self::Conflict(e.to_string()),
            StoreError::Stale { what, id, .. } => Self::Conflict(format!(
                "{what} {id} was changed by someone else since this page was loaded; nothing \
                 was saved: load the page again and make the change on what it shows now"
            )),
            e if e.is_transient() => Self::Unavailable(e),
            other => Self::Internal(other),
        }
    }
}

impl From<remit::domain::InvalidInput> for ConsoleError {
    fn from(invalid: remit::domain::InvalidInput) -> Self {
        Self::BadRequest {
            field: invalid.field,
            message: invalid.reason,
        }
    }
}
