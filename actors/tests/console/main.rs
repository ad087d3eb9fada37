//! The web console in a real browser: headless Chromium driven over
//! WebDriver (ChromeDriver) against `remit run` child processes, on
//! PostgreSQL and on SQLite.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod driver;
mod scaffold;
