//! The Claimer: leases due work of its region, never more than the runtime
//! has free slots for, and routes each task to its destination's throttle.
//!
//! It polls quickly while claims return work and backs off while idle; a
//! NOTIFY from `schedule` wakes it early. A failed claim stops the actor so
//! its supervisor restarts it, and after a restart no claim starts before
//! its backoff has passed, whatever asks for one (a timer, a NOTIFY, free slots
//! freed). The LISTEN connection lives apart from these restarts
//! (`listener`), so a claim that keeps failing never opens a session per
//! attempt.

use remit::store::{ClaimRequest, Leases};
use std::time::{Duration, Instant};

use actix::prelude::*;
use remit::domain::DestinationId;
use slog::{debug, error, info, warn};

use super::super::shared::failpoint;
use super::super::shared::guard::{self, Guarded};
use super::super::shared::messages::{DestinationChanged, Drain, Poll, Route, Work};
use super::super::shared::Shared;
use super::listener;
use crate::telemetry;

pub struct Claimer {
    shared: Shared,
    /// The supervisor, which routes claimed work to its throttle.
    route: Recipient<Route>,
    /// The supervisor, which hears of a destination another process
    /// changed (passed on to the listener).
    destination_changed: Recipient<DestinationChanged>,
    idle_delay: Duration,
    claiming: bool,
    draining: bool,
    next_poll: Option<SpawnHandle>,
    /// Restarts since the last successful claim; spaces out the retries.
    failures: u32,
    /// The last restart came from handing claimed work on, not from the
    /// claim itself: only work handed on ends that streak (an empty claim
    /// proves nothing about it).
    failed_routing: bool,
    /// Where the next claim resumes its turn over the destinations.
    resume_after: Option<remit::store::ResumePoint>,
    /// No claim starts before this: the backoff after a failed one.
    not_before: Option<Instant>,
    /// The LISTEN connection's task: started once, kept across restarts.
    listener: Option<actix_rt::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Claimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claimer")
            .field("failures", &self.failures)
            .field("draining", &self.draining)
            .finish_non_exhaustive()
    }
}

impl Claimer {
    pub fn new(
        shared: Shared,
        route: Recipient<Route>,
        destination_changed: Recipient<DestinationChanged>,
    ) -> Self {
        Self {
            idle_delay: Duration::from_millis(shared.config.claim.busy_poll_ms),
            shared,
            route,
            destination_changed,
            claiming: false,
            draining: false,
            next_poll: None,
            failures: 0,
            failed_routing: false,
            resume_after: None,
            not_before: None,
            listener: None,
        }
    }

    fn schedule_poll(&mut self, ctx: &mut Context<Self>, after: Duration) {
        if let Some(handle) = self.next_poll.take() {
            ctx.cancel_future(handle);
        }
        self.next_poll = Some(ctx.notify_later(Poll, after));
    }

    /// Destinations whose tasks would only come back unsent now: paused,
    /// or with a throttle that cannot start more soon.
    fn skipped(&self) -> Vec<DestinationId> {
        let mut skip = self.shared.pauses.held_now();
        skip.extend(self.shared.busy.held_now());
        skip.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
        skip.dedup();
        skip
    }

    /// Waits until a claim is worth its round trip (slots for a good part
    /// of a batch), or a busy interval, whichever comes first, then claims
    /// whatever slots there are.
    fn wait_for_slots(&mut self, ctx: &mut Context<Self>, slots: usize) {
        if let Some(handle) = self.next_poll.take() {
            ctx.cancel_future(handle);
        }
        let capacity = self.shared.capacity.clone();
        let busy = Duration::from_millis(self.shared.config.claim.busy_poll_ms);
        let wait = async move {
            tokio::select! {
                () = capacity.slots_free(slots) => {}
                () = actix_rt::time::sleep(busy) => {}
            }
        };
        self.next_poll = Some(ctx.spawn(wait.into_actor(self).map(|(), this, ctx| {
            this.next_poll = None;
            guard::step(this, ctx, |this, ctx| this.claim(ctx, false));
        })));
    }

    /// Claims what there are slots for. A `patient` claim first waits for
    /// slots for a good part of a batch: sends end one by one, and a claim
    /// per freed slot would cost a round trip per task.
    fn claim(&mut self, ctx: &mut Context<Self>, patient: bool) {
        if self.claiming || self.draining {
            return;
        }
        if let Some(at) = self.not_before {
            let left = at.saturating_duration_since(Instant::now());
            if !left.is_zero() {
                self.schedule_poll(ctx, left);
                return;
            }
            self.not_before = None;
        }
        let config = &self.shared.config;
        let free = self.shared.capacity.free();
        let worth = (config.claim.batch_size as usize).min(self.shared.capacity.max() / 4);
        if free == 0 || (patient && free < worth) {
            self.wait_for_slots(ctx, worth);
            return;
        }
        let request = ClaimRequest {
            region: self.shared.region,
            lease_owner: self.shared.lease_owner.to_string(),
            lease: chrono::Duration::seconds(i64::try_from(config.lease.seconds).unwrap_or(30)),
            limit: u32::try_from(free)
                .unwrap_or(u32::MAX)
                .min(config.claim.batch_size),
            per_destination_cap: config.claim.per_destination_cap,
            // A destination paced by a rate of its own takes what that rate
            // sends within a stay, not the configuration's share.
            caps: self
                .shared
                .paces
                .caps(self.shared.max_stay(), config.claim.per_destination_cap),
            skip: self.skipped(),
            resume_after: self.resume_after.clone(),
        };
        self.claiming = true;
        let store = self.shared.store.clone();
        let claimed_at = Instant::now();
        let telemetry = self.shared.telemetry.clone();
        let started = std::time::SystemTime::now();
        let claim = async move {
            let claimed = store.claim_due(&request).await?;
            if !claimed.is_empty() {
                let (region, limit) = (request.region, request.limit);
                telemetry::record_claim(&telemetry, started, region, limit, &claimed);
            }
            let resume_after = request.resume_point(&claimed);
            // Nothing due now: ask when something will be, so the next
            // claim can start right then instead of an idle interval later.
            let next_due = if claimed.is_empty() {
                store.next_due(request.region).await?
            } else {
                None
            };
            Ok::<_, remit::store::StoreError>((claimed, resume_after, next_due))
        };
        guard::caught(claim)
            .into_actor(self)
            .map(move |result, this, ctx| {
                this.claiming = false;
                match result {
                    Ok(Ok((claimed, resume_after, next_due))) => {
                        this.resume_after = resume_after;
                        if !this.failed_routing {
                            // The database answers again: a streak of
                            // failed claims is over.
                            this.failures = 0;
                            this.shared.restarts.recovered("claimer");
                        }
                        let routed = guard::step(this, ctx, |this, ctx| {
                            this.route(claimed, claimed_at, next_due, ctx)
                        });
                        if routed.is_none() {
                            this.failed_routing = true;
                        }
                    }
                    Ok(Err(e)) => {
                        error!(this.shared.log, "claim failed; restarting the claimer";
                               "error" => %remit::error_chain(&e));
                        ctx.stop();
                    }
                    Err(panic) => {
                        error!(this.shared.log, "claim panicked; restarting the claimer";
                               "panic" => %panic);
                        ctx.stop();
                    }
                }
            })
            .wait(ctx);
    }

    fn route(
        &mut self,
        claimed: Vec<remit::domain::ClaimedTask>,
        claimed_at: Instant,
        next_due: Option<chrono::Duration>,
        ctx: &mut Context<Self>,
    ) {
        let config = &self.shared.config;
        let busy = Duration::from_millis(config.claim.busy_poll_ms);
        let idle_max = Duration::from_millis(config.claim.idle_poll_ms);
        if claimed.is_empty() {
            self.idle_delay = (self.idle_delay * 2).clamp(busy, idle_max);
            let delay = idle_wait(self.idle_delay, next_due, self.shared.busy.next_end());
            self.schedule_poll(ctx, delay);
            return;
        }
        self.idle_delay = busy;
        let slots = self.shared.capacity.take(claimed.len());
        let reclaimed = claimed.iter().filter(|c| c.reclaimed).count();
        self.shared
            .stats
            .metrics
            .claimed(claimed.len() as u64, reclaimed as u64);
        debug!(self.shared.log, "claimed"; "count" => claimed.len());
        if let Err(e) = failpoint::hit(failpoint::AFTER_CLAIM) {
            // The tasks stay leased and are recovered when the leases expire.
            warn!(self.shared.log, "claimer failing on purpose"; "failpoint" => %e);
            self.failed_routing = true;
            ctx.stop();
            return;
        }
        // Work claimed and handed on: whatever failed before is over.
        self.failures = 0;
        self.failed_routing = false;
        self.shared.restarts.recovered("claimer");
        if slots.len() < claimed.len() {
            // Never happens while the claimer is the only taker of slots;
            // if it did, the leases would expire and the tasks be reclaimed.
            warn!(self.shared.log, "claimed more than the free capacity";
                  "claimed" => claimed.len(), "slots" => slots.len());
        }
        for (task, slot) in claimed.into_iter().zip(slots) {
            if task.reclaimed {
                info!(self.shared.log, "reclaimed an expired lease";
                      "task" => %task.task.id, "destination" => %task.task.destination_id,
                      "attempt" => task.task.attempt_count);
            }
            self.route.do_send(Route(Work {
                claimed: task,
                claimed_at,
                slot,
            }));
        }
        // Work was found: look again right away.
        self.schedule_poll(ctx, Duration::ZERO);
    }
}

/// How long an idle Claimer waits before its next claim: until the next
/// due time the store knows of, or the end of the first hold this process
/// keeps on a destination (a throttle's queue about to run dry at the
/// destination's rate), when either comes before the idle backoff ends.
/// Work due already that this claim did not take (its destination held
/// here, waiting in a line, or taken by another process) is not reported
/// (`Leases::next_due`): the hold's end stands for the first. A wait of
/// zero is a row that fell due just after the claim read the time: the
/// next claim goes at once. The backoff (at most `claim.idle_poll_ms`)
/// stays the safety net for work this process cannot see coming, such as
/// another process's retries.
fn idle_wait(
    backoff: Duration,
    next_due: Option<chrono::Duration>,
    hold_ends: Option<Duration>,
) -> Duration {
    let due = next_due.and_then(|wait| wait.to_std().ok());
    [due, hold_ends]
        .into_iter()
        .flatten()
        .fold(backoff, Duration::min)
}

impl Actor for Claimer {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if self.listener.as_ref().is_none_or(|l| l.is_finished()) && !self.draining {
            let poll = ctx.address().recipient().downgrade();
            let changed = self.destination_changed.clone();
            self.listener = Some(listener::spawn(&self.shared, poll, changed));
        }
        // Bounded exponential backoff after restarts: 0, 2, 4, ... busy
        // intervals, at most five seconds.
        let busy = Duration::from_millis(self.shared.config.claim.busy_poll_ms);
        let backoff = if self.failures == 0 {
            Duration::ZERO
        } else {
            busy.saturating_mul(2u32.saturating_pow(self.failures.min(16)))
                .min(Duration::from_secs(5))
        };
        self.not_before = Instant::now().checked_add(backoff);
        self.schedule_poll(ctx, backoff);
    }
}

impl Drop for Claimer {
    fn drop(&mut self) {
        if let Some(listener) = self.listener.take() {
            listener.abort();
        }
    }
}

impl Guarded for Claimer {
    fn name(&self) -> String {
        "claimer".to_owned()
    }

    fn log(&self) -> &slog::Logger {
        &self.shared.log
    }
}

impl Supervised for Claimer {
    fn restarting(&mut self, _ctx: &mut Context<Self>) {
        self.failures += 1;
        self.shared.restarts.restarted("claimer");
        self.shared.stats.restarted("claimer");
        warn!(self.shared.log, "claimer restarting"; "consecutive_failures" => self.failures);
        self.claiming = false;
        self.next_poll = None;
        self.idle_delay = Duration::from_millis(self.shared.config.claim.busy_poll_ms);
    }
}

impl Handler<Poll> for Claimer {
    type Result = ();

    fn handle(&mut self, _: Poll, ctx: &mut Context<Self>) {
        guard::step(self, ctx, |this, ctx| this.claim(ctx, true));
    }
}

impl Handler<Drain> for Claimer {
    type Result = ();

    fn handle(&mut self, _: Drain, ctx: &mut Context<Self>) {
        self.draining = true;
        if let Some(handle) = self.next_poll.take() {
            ctx.cancel_future(handle);
        }
        if let Some(listener) = self.listener.take() {
            listener.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_claimer_wakes_for_the_next_due_row_within_its_backoff() {
        let backoff = Duration::from_millis(640);
        let ms = chrono::Duration::milliseconds;
        let none = None;
        assert_eq!(
            idle_wait(backoff, Some(ms(37)), none),
            Duration::from_millis(37)
        );
        assert_eq!(
            idle_wait(backoff, Some(ms(5_000)), none),
            backoff,
            "safety net"
        );
        assert_eq!(idle_wait(backoff, None, none), backoff, "nothing live");
        assert_eq!(
            idle_wait(backoff, Some(ms(0)), none),
            Duration::ZERO,
            "fell due just after the claim: claim again at once"
        );
        assert_eq!(
            idle_wait(backoff, Some(ms(500)), Some(Duration::from_millis(90))),
            Duration::from_millis(90),
            "a destination held here is free again first"
        );
    }
}
