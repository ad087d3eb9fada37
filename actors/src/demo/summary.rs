//! The demo's closing report: what was delivered, what the receiver saw,
//! and whether every promise held.

use remit::store::{Database, Latency, Reports, Schedule};
use std::collections::HashMap;
use std::time::Duration;

use remit::domain::{Region, TaskId, TaskState};

use super::receiver::Seen;
use crate::app::AppError;
use crate::status::human;
use crate::words::counted;

impl Seen {
    pub fn rate_limited(&self) -> u64 {
        self.rate_limited_seconds + self.rate_limited_date
    }
}

/// What happened to the tasks a crashed sender held.
struct Crash {
    held: usize,
    /// Their idempotency keys: a 429 answered to a request the crash cut
    /// short never reached the database, so its deadline could not be
    /// honoured, and is not held against remit.
    keys: Vec<String>,
    delivered: usize,
    /// One of them, with its attempt log's outcomes.
    example: Option<(TaskId, Vec<&'static str>)>,
}

pub struct Report {
    reminders: usize,
    delivered: usize,
    elapsed: Duration,
    seen: Seen,
    crash: Option<Crash>,
    latency: Option<Latency>,
}

impl Report {
    pub async fn gather(
        store: &Database,
        tasks: &HashMap<TaskId, TaskState>,
        crashed: Option<Vec<TaskId>>,
        seen: Seen,
        elapsed: Duration,
    ) -> Result<Self, AppError> {
        let mut delivered = 0;
        for id in tasks.keys() {
            if store
                .task(*id)
                .await?
                .is_some_and(|t| t.state == TaskState::Delivered)
            {
                delivered += 1;
            }
        }
        let crash = match crashed {
            None => None,
            Some(held) => {
                let mut done = 0;
                let mut example = None;
                let mut keys = Vec::new();
                for id in &held {
                    let task = store.task(*id).await?;
                    if let Some(task) = &task {
                        keys.push(task.idempotency_key.clone());
                    }
                    if task.map(|t| t.state) == Some(TaskState::Delivered) {
                        done += 1;
                    }
                    let log = store.attempts(*id).await?;
                    // Prefer a task whose request had gone out: its log shows
                    // the lost attempt, then the delivery.
                    let lost = log
                        .iter()
                        .any(|a| a.outcome == remit::domain::AttemptOutcome::Abandoned);
                    if example.is_none() || lost {
                        let outcomes = log.iter().map(|a| a.outcome.as_str()).collect();
                        example = Some((*id, outcomes));
                    }
                }
                Some(Crash {
                    held: held.len(),
                    keys,
                    delivered: done,
                    example,
                })
            }
        };
        let latency = store.status(Some(Region::US)).await?.deadline_to_delivery;
        Ok(Self {
            reminders: tasks.len(),
            delivered,
            elapsed,
            seen,
            crash,
            latency,
        })
    }

    pub fn all_delivered(&self) -> bool {
        self.delivered == self.reminders
            && self.crash.as_ref().is_none_or(|c| c.delivered == c.held)
    }

    pub fn kept_every_deadline(&self) -> bool {
        self.seen.before_deadline == 0 && self.retries_before_their_deadline() == 0
    }

    /// Retries that came before the Retry-After deadline of a 429 that
    /// remit had received, leaving out the crashed sender's tasks.
    fn retries_before_their_deadline(&self) -> usize {
        let crashed = self.crash.as_ref().map_or(&[][..], |c| &c.keys[..]);
        self.seen
            .before_retry_after
            .iter()
            .filter(|key| !crashed.contains(key))
            .count()
    }

    pub fn text(&self) -> String {
        let s = &self.seen;
        let mut lines = vec![(
            "delivered",
            format!(
                "{} of {} in {:.1} s",
                self.delivered,
                counted(self.reminders as u64, "reminder"),
                self.elapsed.as_secs_f64()
            ),
        )];
        let early = self.retries_before_their_deadline();
        let honoured = if early == 0 {
            match s.smallest_margin {
                Some(margin) => format!(
                    "all honoured: {} came after their deadline, the closest by {}",
                    counted(s.honoured, "retry"),
                    human(margin)
                ),
                None => "none was retried yet".to_owned(),
            }
        } else {
            format!(
                "{} came BEFORE their deadline",
                counted(early as u64, "retry")
            )
        };
        lines.push((
            "429s",
            format!(
                "{} received ({} with Retry-After in seconds, {} as an HTTP-date); {honoured}",
                s.rate_limited(),
                s.rate_limited_seconds,
                s.rate_limited_date
            ),
        ));
        lines.push((
            "503s",
            format!("{} received, each retried with backoff", s.unavailable),
        ));
        lines.push((
            "retries",
            format!(
                "{} beyond one per reminder",
                counted(s.requests.saturating_sub(self.reminders as u64), "request")
            ),
        ));
        lines.push((
            "duplicates",
            format!(
                "{} repeated a key the receiver had already accepted; it suppressed them by that key",
                counted(s.duplicates, "request")
            ),
        ));
        if let Some(crash) = &self.crash {
            let mut text = format!(
                "sender-0 crashed holding {}; {} of them were delivered",
                counted(crash.held as u64, "task"),
                crash.delivered
            );
            if let Some((id, outcomes)) = &crash.example {
                text += &format!(" (task {id}: {})", outcomes.join(", then "));
            }
            lines.push(("crash", text));
        }
        let deadlines = if s.before_deadline == 0 {
            "no request came before its reminder's deadline".to_owned()
        } else {
            format!(
                "{} came BEFORE their reminder's deadline",
                counted(s.before_deadline, "request")
            )
        };
        let latency = self.latency.map_or(String::new(), |l| {
            format!(
                "; deadline to delivery p50 {}, p99 {}",
                human(l.p50),
                human(l.p99)
            )
        });
        lines.push(("deadlines", format!("{deadlines}{latency}")));
        let mut out = String::from("\n");
        for (label, text) in lines {
            out += &format!("{label:<11} {text}\n");
        }
        out
    }
}
