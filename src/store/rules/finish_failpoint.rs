//! The failpoint every store's finish passes inside its transaction, and
//! the exit status a crash there ends the process with (docs/failpoints.md).
//! Shared by the stores, so a test names one failpoint whatever the backend.

/// The failpoint inside the finish transaction.
pub const IN_FINISH_FAILPOINT: &str = "remit::in_finish";

/// The exit status a crash failpoint ends the process with.
pub const CRASH_EXIT_CODE: i32 = 86;
