//! Progress on stderr while a run goes: a bar on a terminal, a line every
//! few seconds otherwise (CI logs, `2> file`).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

#[derive(Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
    label: String,
    total: u64,
    started: Instant,
    last_line: Instant,
}

const LINE_EVERY: Duration = Duration::from_secs(5);

impl Progress {
    pub fn new(label: &str, total: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total);
            if let Ok(style) = ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} {per_sec} {msg}",
            ) {
                bar.set_style(style);
            }
            bar.set_prefix(label.to_owned());
            bar
        });
        Self {
            bar,
            label: label.to_owned(),
            total,
            started: Instant::now(),
            last_line: Instant::now(),
        }
    }

    pub fn set(&mut self, done: u64, note: &str) {
        match &self.bar {
            Some(bar) => {
                bar.set_position(done);
                bar.set_message(note.to_owned());
            }
            None if self.last_line.elapsed() >= LINE_EVERY => {
                self.last_line = Instant::now();
                eprintln!(
                    "{}: {done}/{} after {:.0} s {note}",
                    self.label,
                    self.total,
                    self.started.elapsed().as_secs_f64()
                );
            }
            None => {}
        }
    }

    /// Prints a line of its own without tearing the bar.
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
