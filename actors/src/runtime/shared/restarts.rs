//! Which actors keep failing. Every supervised actor reports its restarts
//! here: the streak spaces out its restarts (exponential backoff), and an
//! actor whose streak reaches [`LOOPING`] within [`WINDOW`] makes /readyz
//! report the region as unable to make progress.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Restarts in a row that count as a restart loop.
pub const LOOPING: u32 = 3;
/// A failure this long after the previous one starts a new streak.
pub const WINDOW: Duration = Duration::from_secs(60);
/// The longest wait before a restarted actor takes work again.
const MAX_BACKOFF: Duration = Duration::from_secs(2);
const FIRST_BACKOFF: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Default)]
pub struct Restarts {
    streaks: Arc<Mutex<HashMap<String, Streak>>>,
}

#[derive(Debug, Clone, Copy)]
struct Streak {
    restarts: u32,
    last: Instant,
}

impl Restarts {
    /// Records a restart of `actor` and returns how long it should wait
    /// before taking work again.
    pub fn restarted(&self, actor: &str) -> Duration {
        let now = Instant::now();
        let mut streaks = self.streaks.lock();
        let streak = streaks.entry(actor.to_owned()).or_insert(Streak {
            restarts: 0,
            last: now,
        });
        if now.duration_since(streak.last) > WINDOW {
            streak.restarts = 0;
        }
        streak.restarts = streak.restarts.saturating_add(1);
        streak.last = now;
        backoff(streak.restarts)
    }

    /// The actor did useful work: its streak is over.
    pub fn recovered(&self, actor: &str) {
        self.streaks.lock().remove(actor);
    }

    /// An actor that is restart-looping now, if any.
    pub fn looping(&self) -> Option<String> {
        let streaks = self.streaks.lock();
        streaks
            .iter()
            .find(|(_, s)| s.restarts >= LOOPING && s.last.elapsed() <= WINDOW)
            .map(|(name, _)| name.clone())
    }
}

/// 50 ms, 100 ms, 200 ms, ... at most two seconds.
fn backoff(restarts: u32) -> Duration {
    let doublings = restarts.saturating_sub(1).min(16);
    FIRST_BACKOFF
        .saturating_mul(1 << doublings)
        .min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_back_off_and_a_loop_is_reported_until_recovery() {
        let restarts = Restarts::default();
        assert_eq!(restarts.restarted("sender-0"), Duration::from_millis(50));
        assert_eq!(restarts.restarted("sender-0"), Duration::from_millis(100));
        assert_eq!(restarts.looping(), None);
        restarts.restarted("sender-0");
        assert_eq!(restarts.looping().as_deref(), Some("sender-0"));
        for _ in 0..40 {
            assert!(restarts.restarted("sender-0") <= MAX_BACKOFF);
        }
        restarts.recovered("sender-0");
        assert_eq!(restarts.looping(), None);
    }
}
