//! A Sender: carries claimed tasks through [`deliver`] (many at once, each
//! in its own future) and keeps track of what it holds.
//!
//! Each delivery runs detached from the actor and reports back when it
//! ends. A delivery that fails in a way the sender cannot handle (a
//! failpoint, a panic) goes back to the database at once, so another
//! attempt can start without waiting for the lease to expire (the
//! idempotency key makes the possible duplicate safe), and the sender is
//! restarted after a backoff; the other deliveries run on.

use remit::store::{Destinations, Leases};
use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use remit::domain::DestinationId;
use slog::{error, warn};

use super::super::finish::hand_back::hand_back;
use super::super::finish::retry;
use super::super::shared::guard::{self, Guarded};
use super::super::shared::messages::{Abandon, Crash, Deliver, Delivered, Wake, Work};
use super::super::shared::Shared;
use super::delivery::{deliver, DeliveryFailure};
use super::transport;
use super::under_way::UnderWay;

pub struct Sender {
    shared: Shared,
    name: String,
    client: awc::Client,
    /// Sends under way, by a number per delivery: the same task can be in
    /// here twice (a stale lease and its reclaim), and each must be
    /// accounted for on its own.
    held: HashMap<u64, Held>,
    next_delivery: u64,
    /// Set by a restart: how long to wait before taking work again.
    backoff: Option<Duration>,
    /// Shutdown gave up on in-flight sends: nothing new starts here.
    abandoned: bool,
}

/// One task a sender is carrying. Dropping it frees the task's slot in
/// memory, and its request's in-flight places if the delivery has not
/// given them back already.
struct Held {
    work: Work,
    /// The number of the token the request goes out with.
    token: u64,
    /// The request's in-flight places, and the throttle to wake when it is
    /// over.
    under_way: UnderWay,
    /// Set just before the request goes out: from then on the receiver may
    /// have it, so giving the task back counts as an attempt.
    sent: Rc<Cell<bool>>,
    /// The delivery's future, to stop it before the task is handed back
    /// while it runs (shutdown past its grace period).
    running: Option<actix_rt::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("name", &self.name)
            .field("held", &self.held.len())
            .finish_non_exhaustive()
    }
}

impl Sender {
    pub fn new(shared: Shared, index: usize) -> Self {
        Self {
            client: transport::client(shared.send_timeout(), shared.egress.clone()),
            name: format!("sender-{index}"),
            shared,
            held: HashMap::new(),
            next_delivery: 0,
            backoff: None,
            abandoned: false,
        }
    }

    /// Hands back everything held (shutdown past its grace period): tasks
    /// not yet sent are handed back; tasks that may have reached the receiver
    /// are abandoned, which counts the attempt.
    fn give_back_held(&mut self) {
        for (_, held) in self.held.drain() {
            give_back(&self.shared, held);
        }
    }

    fn finished(&mut self, Ended { number, result }: Ended, ctx: &mut Context<Self>) {
        let Some(held) = self.held.remove(&number) else {
            // Handed back already (shutdown gave up on it).
            return;
        };
        let task = held.work.claimed.task.id;
        let failure = match result {
            Ok(Ok(delivered)) => {
                self.shared.restarts.recovered(&self.name);
                let unsent = (delivered == Delivered::HandedBack).then_some(held.token);
                held.under_way.tell(Wake { unsent });
                return;
            }
            Ok(Err(failure)) => failure,
            Err(panic) => {
                error!(self.shared.log, "a delivery panicked; restarting the sender";
                       "sender" => &self.name, "task" => %task, "panic" => %panic);
                give_back(&self.shared, held);
                ctx.stop();
                return;
            }
        };
        match failure {
            // A database error before the request belongs to this task
            // alone: hand it back and keep the other requests going.
            DeliveryFailure::Store(e) => {
                warn!(self.shared.log, "could not carry the task through; handing it back";
                      "task" => %task, "error" => %remit::error_chain(&e));
                give_back(&self.shared, held);
            }
            // The outcome could not be written: leave the lease to expire
            // rather than hand the task back due before a receiver's
            // deadline, and keep trying to commit the receiver's pause so
            // no process sends inside it.
            DeliveryFailure::Unrecorded { source, pause } => {
                error!(self.shared.log, "outcome not recorded; the lease will expire";
                       "task" => %task, "error" => %remit::error_chain(&source));
                if let Some(until) = pause {
                    keep_pausing(&self.shared, held.work.destination().clone(), until);
                }
                held.under_way.tell(Wake::CHANGED);
            }
            // Deleted since the claim: back to the database, where no
            // claim takes it again and its deletion's cancel ends it.
            DeliveryFailure::NoDestination(destination) => {
                warn!(self.shared.log, "the destination is gone; handing the task back";
                      "task" => %task, "destination" => destination);
                give_back(&self.shared, held);
            }
            e => {
                error!(self.shared.log, "send failed; restarting the sender";
                       "task" => %task, "error" => %remit::error_chain(&e));
                give_back(&self.shared, held);
                ctx.stop();
            }
        }
    }
}

/// Commits a receiver's pause that the finish could not, retrying until it
/// is in the database or has ended. This process holds it meanwhile.
fn keep_pausing(shared: &Shared, destination: DestinationId, until: Instant) {
    let shared = shared.clone();
    actix_rt::spawn(async move {
        let mut wait = Duration::from_millis(100);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            let pause = chrono::Duration::from_std(left).unwrap_or(chrono::Duration::MAX);
            match shared.store.pause_destination(&destination, pause).await {
                Ok(_) => return,
                Err(e) => {
                    warn!(shared.log, "could not record the destination's pause; trying again";
                          "destination" => %destination, "error" => %remit::error_chain(&e));
                    actix_rt::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
            }
        }
    });
}

/// Gives one held task back to the database: handed back if its request never
/// went out, abandoned (the attempt counts) if it may have. Its slot in
/// memory is freed once the database has it back.
fn give_back(shared: &Shared, held: Held) {
    let Held {
        work,
        token,
        under_way,
        sent,
        running,
    } = held;
    // Everything runs on this thread, so once aborted the delivery makes no
    // more progress: `sent` says for good whether its request went out.
    if let Some(running) = running {
        running.abort();
    }
    // The throttle hears before its permit is back, so it never looks
    // idle (and is evicted) with the news of an unspent token on its way.
    under_way.tell(Wake {
        unsent: (!sent.get()).then_some(token),
    });
    under_way.release();
    if !sent.get() {
        hand_back(shared, vec![work], None);
        return;
    }
    let shared = shared.clone();
    actix_rt::spawn(async move {
        let lease = work.claimed.lease();
        let record = remit::domain::AttemptRecord::default();
        // Retried while the lease is still this process's to end.
        let deadline = work
            .claimed_at
            .checked_add(shared.lease().saturating_sub(shared.finish_margin()))
            .unwrap_or(work.claimed_at);
        let abandoned = retry::until(
            deadline,
            || shared.store.abandon(&lease, &record),
            |e| {
                warn!(shared.log, "abandon failed; trying again";
                      "task" => %lease.task_id, "error" => %remit::error_chain(e));
                true
            },
        )
        .await;
        match abandoned {
            Ok(remit::store::TransitionOutcome::Applied) => shared
                .stats
                .metrics
                .attempt(work.destination(), remit::domain::AttemptOutcome::Abandoned),
            Ok(_) => {}
            Err(e) => warn!(shared.log, "abandon failed; the lease will expire";
                            "task" => %lease.task_id, "error" => %remit::error_chain(&e)),
        }
        drop(work);
    });
}

impl Actor for Sender {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if let Some(backoff) = self.backoff.take() {
            // Messages wait in the mailbox meanwhile.
            ctx.wait(actix_rt::time::sleep(backoff).into_actor(self));
        }
    }
}

impl Guarded for Sender {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn log(&self) -> &slog::Logger {
        &self.shared.log
    }
}

impl Supervised for Sender {
    fn restarting(&mut self, _ctx: &mut Context<Self>) {
        self.shared.stats.restarted("sender");
        self.backoff = Some(self.shared.restarts.restarted(&self.name));
        // Deliveries under way run on by themselves and report back to the
        // restarted actor; only the failed one was handed back.
        warn!(self.shared.log, "sender restarting"; "sender" => &self.name,
              "under_way" => self.held.len(), "backoff_ms" => self.backoff.unwrap_or_default().as_millis());
    }
}

impl Handler<Crash> for Sender {
    type Result = MessageResult<Crash>;

    fn handle(&mut self, _: Crash, ctx: &mut Context<Self>) -> Self::Result {
        let held: Vec<_> = self.held.values().map(|h| h.work.claimed.task.id).collect();
        error!(self.shared.log, "sender crashing on request; its tasks go back";
               "sender" => &self.name, "held" => held.len());
        self.give_back_held();
        ctx.stop();
        MessageResult(held)
    }
}

impl Handler<Deliver> for Sender {
    type Result = ();

    fn handle(&mut self, message: Deliver, ctx: &mut Context<Self>) {
        guard::step(self, ctx, |this, ctx| this.start(message, ctx));
    }
}

impl Sender {
    fn start(&mut self, message: Deliver, ctx: &mut Context<Self>) {
        let Deliver {
            work,
            token,
            in_flight,
            throttle,
        } = message;
        if self.abandoned {
            // Told before the permit is back, as in `give_back`.
            throttle.do_send(Wake {
                unsent: Some(token),
            });
            drop(in_flight);
            hand_back(&self.shared, vec![work], None);
            return;
        }
        let number = self.next_delivery;
        self.next_delivery += 1;
        let sent = Rc::new(Cell::new(false));
        let under_way = UnderWay::new(in_flight, throttle);
        // Boxed where it is made: the future is some 6 kB, and each move on
        // its way into the spawned task would copy all of it.
        let attempt = Box::pin(deliver(
            self.shared.clone(),
            self.client.clone(),
            work.claimed.clone(),
            work.claimed_at,
            (token, under_way.clone()),
            sent.clone(),
        ));
        self.held.insert(
            number,
            Held {
                work,
                token,
                under_way,
                sent,
                running: None,
            },
        );
        // Detached from this actor's context, so a restart (another
        // delivery's panic) cannot cancel a delivery mid-finish: each
        // reports back to whichever incarnation holds the address.
        let me = ctx.address();
        let running = actix_rt::spawn(async move {
            let result = guard::caught(attempt).await;
            me.do_send(Ended { number, result });
        });
        if let Some(held) = self.held.get_mut(&number) {
            held.running = Some(running);
        }
    }
}

/// A delivery's future ended; sent back to its sender.
#[derive(Message)]
#[rtype(result = "()")]
struct Ended {
    number: u64,
    result: Result<Result<Delivered, DeliveryFailure>, guard::Panicked>,
}

impl Handler<Ended> for Sender {
    type Result = ();

    fn handle(&mut self, ended: Ended, ctx: &mut Context<Self>) {
        guard::step(self, ctx, |this, ctx| this.finished(ended, ctx));
    }
}

impl Handler<Abandon> for Sender {
    type Result = ();

    /// Shutdown past its grace period: hand back whatever is still under
    /// way; a delivery that ends later finds its entry gone.
    fn handle(&mut self, _: Abandon, _: &mut Context<Self>) {
        self.abandoned = true;
        self.give_back_held();
    }
}
