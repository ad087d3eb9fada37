//! A logger that keeps every record, for tests that check what is logged.

use std::sync::{Arc, Mutex};

/// Every record as one line: the message, then ` key=value` pairs.
#[derive(Clone, Default)]
pub struct CapturedLog(Arc<Mutex<Vec<String>>>);

impl CapturedLog {
    pub fn logger(&self) -> slog::Logger {
        slog::Logger::root(Capture(self.0.clone()), slog::o!())
    }

    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

struct Capture(Arc<Mutex<Vec<String>>>);

impl slog::Drain for Capture {
    type Ok = ();
    type Err = slog::Never;

    fn log(&self, record: &slog::Record, values: &slog::OwnedKVList) -> Result<(), slog::Never> {
        let mut line = Line(record.msg().to_string());
        let _ = slog::KV::serialize(&record.kv(), record, &mut line);
        let _ = slog::KV::serialize(values, record, &mut line);
        self.0.lock().unwrap().push(line.0);
        Ok(())
    }
}

struct Line(String);

impl slog::Serializer for Line {
    fn emit_arguments(&mut self, key: slog::Key, value: &std::fmt::Arguments) -> slog::Result {
        self.0.push_str(&format!(" {key}={value}"));
        Ok(())
    }
}
