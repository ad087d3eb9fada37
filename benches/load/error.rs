//! What can stop a load run, with enough said to fix it.

/// A failed step of a run. The harness stops at the first one and prints it.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A precondition is missing (the binary, PostgreSQL's tools, a knob).
    #[error("{0}")]
    Setup(String),
    #[error("connecting to PostgreSQL")]
    Connect(#[from] diesel::ConnectionError),
    #[error("a query failed")]
    Query(#[from] diesel::result::Error),
    #[error("the store failed")]
    Store(#[from] remit::store::StoreError),
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// remit's API answered something other than what a healthy process
    /// answers.
    #[error("remit's API: {0}")]
    Api(String),
    /// A `remit` process exited or never became healthy.
    #[error("{0}")]
    Process(String),
}

impl LoadError {
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| LoadError::Io { what, source }
    }
}
