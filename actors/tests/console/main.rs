//! The web console in a real browser: headless Chromium driven over
//! WebDriver (ChromeDriver) against `remit run` child processes, on
//! PostgreSQL and on SQLite. Each scenario writes screenshots of the pages
//! it passes through under `target/console-screenshots/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use remit_testkit::runtime as support;

mod driver;
mod pages;
mod seed;
mod server;

mod bulk_replay;
mod destination_actions;
mod overview;
mod read_only;
mod replay;
mod small_screens;
mod task_changes;
