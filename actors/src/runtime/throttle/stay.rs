//! How long claimed work may stay in a throttle: a small fraction of its
//! lease (its stay). What cannot go within it goes back to the database,
//! due about when its turn would have come, and the claimer leaves the
//! destination out while what is queued here covers the next while, so
//! the destination keeps receiving its rate from memory and nothing is
//! claimed only to be handed back.
//!
//! Every one of these decisions paces by the destination's own limits, so
//! none is made before they are read (a new throttle starts from what the
//! last one took, or the configuration's). The claimer's hold on the
//! destination is worked out afresh from what is queued each time it is
//! set, never kept from a queue since handed back or sent.

use std::time::{Duration, Instant};

use actix::prelude::*;
use slog::debug;

use super::actor::Throttle;
use crate::config::ThrottleLimits;
use crate::runtime::finish::hand_back::{hand_back, hand_back_each};
use crate::runtime::shared::guard;
use crate::runtime::shared::messages::Work;

impl Throttle {
    /// Waits for the next token, keeping only the tasks whose turn comes
    /// before they have been in memory for a small fraction of their lease (their stay).
    /// The queue goes out in order, a token each: the task at position `i`
    /// goes about `wait + i` tokens' time from now. Each task past the stay
    /// goes back to the database due about when its own turn would have
    /// come, so the destination keeps receiving its rate from what is kept
    /// while the rest waits in the database, not in memory.
    pub(super) fn wait_for_token(&mut self, wait: Duration, ctx: &mut Context<Self>) {
        let per_token = per_token(&self.limits);
        let max_stay = self.shared.max_stay();
        let now = Instant::now();
        let turn = |i: usize| {
            wait.saturating_add(per_token.saturating_mul(u32::try_from(i).unwrap_or(u32::MAX)))
        };
        let keep = self
            .queue
            .iter()
            .enumerate()
            .take_while(|(i, work)| {
                now.saturating_duration_since(work.claimed_at)
                    .saturating_add(turn(*i))
                    <= max_stay
            })
            .count();
        if keep < self.queue.len() {
            let later: Vec<(Work, Option<Duration>)> = self
                .queue
                .split_off(keep)
                .into_iter()
                .enumerate()
                .map(|(j, work)| (work, Some(turn(keep + j))))
                .collect();
            debug!(self.shared.log, "handing back what cannot go within the stay";
                   "destination" => %self.destination, "kept" => keep, "count" => later.len());
            hand_back_each(&self.shared, later);
        }
        // Claiming more before the kept tasks are nearly sent would only
        // bring it back; a claim's round trip ahead of that is enough for
        // the next task to be in memory on time.
        self.hold_claims_for(wait);
        if self.queue.is_empty() {
            self.process_slot = None;
            return;
        }
        self.wake = Some(ctx.run_later(wait, |this, ctx| {
            guard::step(this, ctx, |this, ctx| this.pump(ctx));
        }));
    }

    /// How long before the queue runs dry the claimer may claim for this
    /// destination again: a claim's round trip ahead of that is enough for
    /// the next task to be in memory on time.
    fn claim_lead(&self) -> Duration {
        (self.shared.max_stay() / 4)
            .max(Duration::from_millis(self.shared.config.claim.busy_poll_ms))
    }

    /// Leaves the destination out of claims while what is queued here
    /// covers more than the claimer's lead at the destination's rate, and
    /// no longer. Claiming beyond that would bring rows into memory only to
    /// hand them back, one write each; on a busy store those writes delay
    /// the finishes that free the destination's slots, and the destination
    /// then sits at its in-flight cap with tasks past their stay.
    pub(super) fn hold_claims_while_queued(&self) {
        self.hold_claims_for(Duration::ZERO);
    }

    /// As [`Self::hold_claims_while_queued`], when the next token is `wait`
    /// away.
    fn hold_claims_for(&self, wait: Duration) {
        if !self.limits_read {
            return;
        }
        let waiting = self.queue.len().saturating_sub(self.tokens.len());
        let covers = wait.saturating_add(
            per_token(&self.limits).saturating_mul(u32::try_from(waiting).unwrap_or(u32::MAX)),
        );
        self.shared
            .busy
            .set(&self.destination, covers.saturating_sub(self.claim_lead()));
    }

    /// At the in-flight cap nothing moves until a send ends; make sure the
    /// oldest queued task is handed back if that takes longer than it may
    /// wait here. While the destination's requests are ending (one ended
    /// within the stay), the cap is a moment's crowd, not a slow receiver:
    /// only the tasks that overstayed go back, due at once, and claims go
    /// on; otherwise the queue goes back for a send timeout, the longest
    /// the requests under way may take.
    pub(super) fn hand_back_before_overstay(&mut self, ctx: &mut Context<Self>) {
        let Some(head) = self.queue.front() else {
            return;
        };
        let max_stay = self.shared.max_stay();
        let now = Instant::now();
        let waited = now.saturating_duration_since(head.claimed_at);
        let Some(left) = max_stay.checked_sub(waited) else {
            let moving = self
                .last_freed
                .is_some_and(|at| now.saturating_duration_since(at) < max_stay);
            if moving {
                let overstayed = self
                    .queue
                    .iter()
                    .take_while(|work| now.saturating_duration_since(work.claimed_at) >= max_stay)
                    .count();
                let tasks: Vec<Work> = self.queue.drain(..overstayed).collect();
                hand_back(&self.shared, tasks, None);
                self.pump(ctx);
                return;
            }
            let timeout = self.shared.send_timeout();
            self.shared.busy.set(&self.destination, timeout);
            self.hand_back_all(Some(timeout));
            return;
        };
        self.wake = Some(ctx.run_later(left, |this, ctx| {
            guard::step(this, ctx, |this, ctx| this.pump(ctx));
        }));
    }
}

fn per_token(limits: &ThrottleLimits) -> Duration {
    Duration::from_secs_f64(1.0 / limits.rate_per_second)
}
