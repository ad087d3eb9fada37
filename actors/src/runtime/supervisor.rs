//! The region's Supervisor: starts the Claimer and the Senders, creates a
//! Throttle per destination when its tasks arrive and lets it go once it
//! has been idle a while (see `throttle::idle`), keeps every one of them
//! running (actix restarts a supervised actor when it stops), and runs the
//! graceful shutdown.

use remit::store::Destinations;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use remit::domain::DestinationId;
use slog::{info, warn};

use super::claim::claimer::Claimer;
use super::finish::hand_back::hand_back;
use super::send::pool::SenderPool;
use super::send::sender::Sender;
use super::shared::guard::{self, Guarded};
use super::shared::messages::{
    Abandon, Admit, Crash, DestinationChanged, Drain, Evict, Idle, Retune, Route, Shutdown, Wake,
};
use super::shared::Shared;
use super::throttle::spare::SpareTokens;
use super::throttle::Keeper;
use super::throttle::Throttle;
use super::upkeep::alerter::Alerter;
use super::upkeep::event_relay::EventRelay;
use super::upkeep::pruner::Pruner;
use super::upkeep::reconciler::Reconciler;

pub struct RegionSupervisor {
    shared: Shared,
    claimer: Option<Addr<Claimer>>,
    /// Held so the reconciler is restarted when it stops: actix restarts a
    /// supervised actor only while someone still holds its address.
    reconciler: Option<Addr<Reconciler>>,
    /// Held for the same reason.
    pruner: Option<Addr<Pruner>>,
    event_relay: Option<Addr<EventRelay>>,
    alerter: Option<Addr<Alerter>>,
    senders: Option<SenderPool>,
    /// The throttles of destinations with work here.
    throttles: HashMap<DestinationId, Routed>,
    /// Numbers the throttles, so an idle report from one already replaced
    /// is told apart.
    next_throttle: u64,
    /// Tokens evicted throttles left unspent.
    spare: SpareTokens,
    draining: bool,
    /// Read by /readyz.
    running: Arc<AtomicBool>,
}

/// A throttle, and how many tasks it has been sent.
struct Routed {
    addr: Addr<Throttle>,
    id: u64,
    sent: u64,
}

impl std::fmt::Debug for RegionSupervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegionSupervisor")
            .field("draining", &self.draining)
            .finish_non_exhaustive()
    }
}

impl RegionSupervisor {
    pub fn new(shared: Shared, running: Arc<AtomicBool>) -> Self {
        Self {
            shared,
            claimer: None,
            reconciler: None,
            pruner: None,
            event_relay: None,
            alerter: None,
            senders: None,
            throttles: HashMap::new(),
            next_throttle: 0,
            spare: SpareTokens::default(),
            draining: false,
            running,
        }
    }

    /// The destination's throttle, started if it has none.
    fn throttle(
        &mut self,
        destination: &DestinationId,
        ctx: &mut Context<Self>,
    ) -> Option<&mut Routed> {
        if !self.throttles.contains_key(destination) {
            let senders = self.senders.clone()?;
            let shared = self.shared.clone();
            let keeper = Keeper {
                id: self.next_throttle,
                supervisor: ctx.address().recipient::<Idle>().downgrade(),
                spare: self.spare.clone(),
            };
            self.next_throttle += 1;
            let id = keeper.id;
            let dest = destination.clone();
            let addr =
                actix::Supervisor::start(move |_| Throttle::new(shared, dest, senders, keeper));
            self.throttles
                .insert(destination.clone(), Routed { addr, id, sent: 0 });
        }
        self.throttles.get_mut(destination)
    }
}

impl Actor for RegionSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let count = self.shared.config.send.senders.max(1) as usize;
        let senders = (0..count)
            .map(|index| {
                let shared = self.shared.clone();
                actix::Supervisor::start(move |_| Sender::new(shared, index))
            })
            .collect();
        self.senders = Some(SenderPool::new(senders));
        let shared = self.shared.clone();
        let route = ctx.address().recipient();
        let changed = ctx.address().recipient();
        self.claimer = Some(actix::Supervisor::start(move |_| {
            Claimer::new(shared, route, changed)
        }));
        let shared = self.shared.clone();
        self.reconciler = Some(actix::Supervisor::start(move |_| Reconciler::new(shared)));
        let shared = self.shared.clone();
        self.pruner = Some(actix::Supervisor::start(move |_| Pruner::new(shared)));
        let shared = self.shared.clone();
        self.event_relay = Some(actix::Supervisor::start(move |_| EventRelay::new(shared)));
        let shared = self.shared.clone();
        self.alerter = Some(actix::Supervisor::start(move |_| Alerter::new(shared)));
        let every = self.shared.config.log.summary_seconds;
        if every > 0 {
            ctx.run_interval(std::time::Duration::from_secs(every), move |this, _| {
                this.shared.stats.summary.log(&this.shared.log);
            });
        } else {
            self.shared.stats.summary.turn_off();
        }
        self.running.store(true, Ordering::SeqCst);
        info!(self.shared.log, "region runtime started"; "senders" => count, "max_in_flight" => self.shared.config.send.max_in_flight);
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.running.store(false, Ordering::SeqCst);
    }
}

impl Guarded for RegionSupervisor {
    fn name(&self) -> String {
        "region-supervisor".to_owned()
    }

    fn log(&self) -> &slog::Logger {
        &self.shared.log
    }
}

/// Crash the region's first sender (see [`Crash`]); answers the tasks it
/// held.
#[derive(Debug, Message)]
#[rtype(result = "Vec<remit::domain::TaskId>")]
pub struct CrashSender;

impl Handler<CrashSender> for RegionSupervisor {
    type Result = ResponseFuture<Vec<remit::domain::TaskId>>;

    fn handle(&mut self, _: CrashSender, _ctx: &mut Context<Self>) -> Self::Result {
        let sender = self
            .senders
            .as_ref()
            .and_then(|pool| pool.all().first().cloned());
        Box::pin(async move {
            match sender {
                Some(sender) => sender.send(Crash).await.unwrap_or_default(),
                None => Vec::new(),
            }
        })
    }
}

impl Handler<Route> for RegionSupervisor {
    type Result = ();

    fn handle(&mut self, Route(work): Route, ctx: &mut Context<Self>) {
        guard::survive(self, ctx, |this, ctx| {
            if this.draining {
                hand_back(&this.shared, vec![work], None);
                return;
            }
            let destination = work.destination().clone();
            match this.throttle(&destination, ctx) {
                Some(throttle) => {
                    throttle.sent += 1;
                    throttle.addr.do_send(Admit(work));
                }
                None => hand_back(&this.shared, vec![work], None),
            }
        });
    }
}

impl Handler<Idle> for RegionSupervisor {
    type Result = ();

    /// Lets the throttle go when every task sent to it has been admitted:
    /// no `Admit` is left in its mailbox, and none will follow, since the
    /// next task of its destination starts a new throttle.
    fn handle(&mut self, idle: Idle, _: &mut Context<Self>) {
        let current = self
            .throttles
            .get(&idle.destination)
            .is_some_and(|t| t.id == idle.throttle && t.sent == idle.admitted);
        if !current {
            return;
        }
        if let Some(throttle) = self.throttles.remove(&idle.destination) {
            throttle.addr.do_send(Evict);
        }
    }
}

/// How long a process holds a destination it heard was disabled: long
/// enough for its throttle to hand back what it has queued; the claims
/// take nothing more of it while it stays disabled.
const DISABLED_HOLD: std::time::Duration = std::time::Duration::from_secs(1);

impl Handler<DestinationChanged> for RegionSupervisor {
    type Result = ();

    /// Another process committed a pause, disabled the destination or
    /// changed its settings: read the row (the authority, on the
    /// database's clock), give its throttle the settings, and hold a
    /// paused or disabled destination here too; its throttle hands queued
    /// tasks back. A
    /// disabled destination is held for [`DISABLED_HOLD`] so that what is
    /// queued goes back now rather than as each task reaches a sender (which
    /// would hand it back all the same: the sender checks the row).
    fn handle(&mut self, DestinationChanged(id): DestinationChanged, ctx: &mut Context<Self>) {
        let store = self.shared.store.clone();
        let read = async move { store.send_target(&id).await.map(|t| (id, t)) };
        guard::caught(read)
            .into_actor(self)
            .map(|result, this, _| match result {
                Ok(Ok((id, Some(target)))) => {
                    // Its limits may have changed: its throttle takes them
                    // now, even with tasks queued.
                    let settings = &target.destination.settings;
                    if let Some(throttle) = this.throttles.get(&id) {
                        throttle.addr.do_send(Retune(settings.clone()));
                    } else {
                        // Its next claim is paced by them already.
                        let limits = this.shared.config.limits_of(&id, settings);
                        let keep = this.shared.paces_keep(&id, &limits);
                        this.shared.paces.heard(&id, limits, keep);
                    }
                    // A claim left it out while its queue covered the old
                    // rate's next while; with new limits, claim it again.
                    this.shared.busy.release(&id);
                    if !target.destination.enabled {
                        this.shared.pauses.hold(&id, DISABLED_HOLD);
                        if let Some(throttle) = this.throttles.get(&id) {
                            throttle.addr.do_send(Wake::CHANGED);
                        }
                    } else if let Some(left) = target.pause_left.and_then(|d| d.to_std().ok()) {
                        // Counted once: this process's own 429 was counted
                        // when it arrived, and its NOTIFY extends nothing.
                        let known = this.shared.pauses.left(&id).unwrap_or_default();
                        if left > known + std::time::Duration::from_millis(50) {
                            this.shared.stats.metrics.paused(&id);
                        }
                        this.shared.pauses.hold(&id, left);
                        // An evicted throttle has nothing to hand back; the
                        // next one finds the pause held.
                        if let Some(throttle) = this.throttles.get(&id) {
                            throttle.addr.do_send(Wake::CHANGED);
                        }
                    }
                }
                // Deleted: what is queued goes back, as for a disabled
                // one (the claims take nothing more of it).
                Ok(Ok((id, None))) => {
                    this.shared.pauses.hold(&id, DISABLED_HOLD);
                    if let Some(throttle) = this.throttles.get(&id) {
                        throttle.addr.do_send(Wake::CHANGED);
                    }
                }
                Ok(Err(e)) => warn!(this.shared.log, "could not read a changed destination";
                                    "error" => %remit::error_chain(&e)),
                Err(panic) => warn!(this.shared.log, "reading a changed destination panicked";
                                    "panic" => %panic),
            })
            .spawn(ctx);
    }
}

impl Handler<Shutdown> for RegionSupervisor {
    type Result = ResponseActFuture<Self, ()>;

    /// Stop claiming, hand queued tasks back, let in-flight sends finish
    /// within the grace period, then release whatever is still held.
    fn handle(&mut self, _: Shutdown, _: &mut Context<Self>) -> Self::Result {
        self.draining = true;
        self.running.store(false, Ordering::SeqCst);
        let claimer = self.claimer.clone();
        let throttles: Vec<_> = self.throttles.values().map(|t| t.addr.clone()).collect();
        let senders: Vec<_> = self
            .senders
            .as_ref()
            .map(|p| p.all().to_vec())
            .unwrap_or_default();
        let shared = self.shared.clone();
        let grace = Duration::from_millis(shared.config.shutdown.grace_ms);
        Box::pin(
            async move {
                // One deadline for the whole drain. The claimer is told
                // without waiting (a claim stuck on a dead database
                // connection must not hold shutdown up), and every throttle
                // is told even if one is slow to answer.
                let deadline = tokio::time::Instant::now() + grace;
                if let Some(claimer) = claimer {
                    claimer.do_send(Drain);
                }
                for throttle in &throttles {
                    let _ = tokio::time::timeout_at(deadline, throttle.send(Drain)).await;
                }
                info!(shared.log, "shutting down: waiting for in-flight sends";
                      "held" => shared.capacity.held());
                if tokio::time::timeout_at(deadline, shared.capacity.drained())
                    .await
                    .is_err()
                {
                    warn!(shared.log, "grace period over; releasing the rest";
                          "held" => shared.capacity.held());
                    for sender in &senders {
                        let _ = tokio::time::timeout(Duration::from_secs(1), sender.send(Abandon))
                            .await;
                    }
                    // Releases are single-row updates; give them a moment.
                    let _ = tokio::time::timeout(Duration::from_secs(5), shared.capacity.drained())
                        .await;
                }
                // What the last period came to, so a stop loses no count.
                if shared.config.log.summary_seconds > 0 {
                    shared.stats.summary.log(&shared.log);
                }
                info!(shared.log, "region runtime stopped"; "held" => shared.capacity.held());
            }
            .into_actor(self),
        )
    }
}
