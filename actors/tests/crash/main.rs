//! Crash recovery, proven on the real binary: `remit run` is killed at each
//! durable boundary (a failpoint that exits the process, or SIGKILL at a
//! random moment), another consumer takes over, and the database and the
//! receiver's log are checked for what remit promises. Also here, because
//! it needs the same child processes: a pause one process commits holds
//! the other.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use remit_testkit::runtime as support;

mod boundaries;
mod consumer;
mod pauses;
mod randomized;
mod regions;
