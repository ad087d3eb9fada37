//! A Sender: carries claimed tasks through [`deliver`] (many at once, each
//! in its own future) and keeps track of what it holds.
//!
//! A sender that fails (an error it cannot handle, a failpoint, a panic)
//! stops; its supervisor restarts it after a backoff, and the tasks it held
//! go back to the database at once so another attempt can start without
//! waiting for the lease to expire. The idempotency key makes the possible
//! duplicate safe.

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use actix::prelude::*;
use remit::store::Store;
use slog::{error, warn};
use tokio::sync::OwnedSemaphorePermit;

use super::delivery::{deliver, DeliveryFailure};
use super::guard::{self, Guarded};
use super::messages::{Abandon, Deliver, Wake, Work};
use super::throttle::release;
use super::{transport, RuntimeStats, Shared};

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
}

/// One task a sender is carrying. Dropping it frees the task's place in
/// memory and its destination's in-flight slot.
struct Held {
    work: Work,
    _in_flight: OwnedSemaphorePermit,
    /// The throttle to wake when the request is over.
    throttle: Recipient<Wake>,
    /// Set just before the request goes out: from then on the receiver may
    /// have it, so giving the task back counts as an attempt.
    sent: Rc<Cell<bool>>,
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
        }
    }

    /// Hands back everything held (on restart or abandon): tasks not yet
    /// sent are released; tasks that may have reached the receiver are
    /// abandoned, which counts the attempt.
    fn release_held(&mut self) {
        for (_, held) in self.held.drain() {
            hand_back(&self.shared, held);
        }
    }

    fn finished(
        &mut self,
        number: u64,
        result: Result<(), DeliveryFailure>,
        ctx: &mut Context<Self>,
    ) {
        let Some(held) = self.held.remove(&number) else {
            return;
        };
        let task = held.work.claimed.task.id;
        match result {
            Ok(()) => {
                self.shared.health.recovered(&self.name);
                held.throttle.do_send(Wake);
            }
            // A database error before the request belongs to this task
            // alone: hand it back and keep the other requests going.
            Err(DeliveryFailure::Store(e)) => {
                warn!(self.shared.log, "could not carry the task through; handing it back";
                      "task" => %task, "error" => %crate::error_chain(&e));
                hand_back(&self.shared, held);
            }
            // The outcome could not be written: leave the lease to expire
            // rather than hand the task back due before a receiver's
            // deadline. A pause stays in force in this process.
            Err(e @ DeliveryFailure::Unrecorded(_)) => {
                error!(self.shared.log, "outcome not recorded; the lease will expire";
                       "task" => %task, "error" => %crate::error_chain(&e));
                held.throttle.do_send(Wake);
            }
            Err(e) => {
                error!(self.shared.log, "send failed; restarting the sender";
                       "task" => %task, "error" => %crate::error_chain(&e));
                // Back into the map: the restart hands it back along with
                // every other send this actor had under way.
                self.held.insert(number, held);
                ctx.stop();
            }
        }
    }
}

/// Gives one held task back to the database: released if its request never
/// went out, abandoned (the attempt counts) if it may have. Its place in
/// memory is freed once the database has it back.
fn hand_back(shared: &Shared, held: Held) {
    let Held {
        work,
        _in_flight,
        throttle,
        sent,
    } = held;
    drop(_in_flight);
    throttle.do_send(Wake);
    if !sent.get() {
        release(shared, vec![work], None);
        return;
    }
    let shared = shared.clone();
    actix_rt::spawn(async move {
        let lease = work.claimed.lease();
        let record = remit::domain::AttemptRecord::default();
        if let Err(e) = shared.store.abandon(&lease, &record).await {
            warn!(shared.log, "abandon failed; the lease will expire";
                  "task" => %lease.task_id, "error" => %crate::error_chain(&e));
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
        RuntimeStats::bump(&self.shared.stats.restarts);
        self.backoff = Some(self.shared.health.restarted(&self.name));
        warn!(self.shared.log, "sender restarting"; "sender" => &self.name,
              "releasing" => self.held.len(), "backoff_ms" => self.backoff.unwrap_or_default().as_millis());
        self.release_held();
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
            in_flight,
            throttle,
        } = message;
        let number = self.next_delivery;
        self.next_delivery += 1;
        let sent = Rc::new(Cell::new(false));
        let attempt = deliver(
            self.shared.clone(),
            self.client.clone(),
            work.claimed.clone(),
            work.claimed_at,
            sent.clone(),
        );
        self.held.insert(
            number,
            Held {
                work,
                _in_flight: in_flight,
                throttle,
                sent,
            },
        );
        guard::caught(attempt)
            .into_actor(self)
            .map(move |result, this, ctx| {
                let result = match result {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(e)) => Err(e),
                    Err(panic) => {
                        error!(this.shared.log, "a delivery panicked; restarting the sender";
                               "sender" => &this.name, "panic" => %panic);
                        ctx.stop();
                        return;
                    }
                };
                guard::step(this, ctx, |this, ctx| this.finished(number, result, ctx));
            })
            .spawn(ctx);
    }
}

impl Handler<Abandon> for Sender {
    type Result = ();

    fn handle(&mut self, _: Abandon, ctx: &mut Context<Self>) {
        self.release_held();
        ctx.stop();
    }
}
