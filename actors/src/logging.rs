//! Structured logs through slog. Log records name tasks, destinations,
//! regions, attempts, statuses and outcomes; never a payload byte.

use slog::Drain;

use crate::config::{Config, LogFormat};

/// Keeps the async drain flushing; drop it last, at exit.
pub type LogGuard = slog_async::AsyncGuard;

pub fn logger(config: &Config, level: slog::Level) -> (slog::Logger, LogGuard) {
    let drain: Box<dyn Drain<Ok = (), Err = slog::Never> + Send> = match config.log.format {
        LogFormat::Json => Box::new(
            slog_json::Json::new(std::io::stderr())
                .add_default_keys()
                .build()
                .fuse(),
        ),
        LogFormat::Terminal => {
            let decorator = slog_term::PlainDecorator::new(std::io::stderr());
            Box::new(slog_term::FullFormat::new(decorator).build().fuse())
        }
    };
    // Block rather than drop records when the channel is full: a lost log
    // line about a fenced or failed delivery is worse than a slow log call.
    let (drain, guard) = slog_async::Async::new(drain)
        .chan_size(4096)
        .overflow_strategy(slog_async::OverflowStrategy::Block)
        .build_with_guard();
    // The level is judged before the channel, on the caller's thread: a
    // record below it is dropped there, never copied into an owned record
    // and sent to the logging thread to be dropped (one wake-up of that
    // thread per delivery at `warning`).
    let drain = drain.filter_level(level).fuse();
    (slog::Logger::root(drain, slog::o!()), guard)
}
