//! Turning a panic into a supervised restart.
//!
//! actix restarts a `Supervised` actor only when it stops; a panic in a
//! handler or in one of its futures would instead kill the actor for good,
//! leave its address registered and drop every message sent to it. Every
//! handler body and every future an actor spawns runs through [`step`] or
//! [`caught`], which log the panic and stop the actor, so its supervisor
//! restarts it (with backoff, see [`super::super::health`]).

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use actix::prelude::*;
use futures_util::FutureExt;
use slog::error;

/// An actor whose panics become restarts.
pub trait Guarded: Actor<Context = Context<Self>> {
    /// Its name in logs and in the readiness report.
    fn name(&self) -> String;
    fn log(&self) -> &slog::Logger;
}

/// Runs `body`; if it panics, logs it and stops the actor.
pub fn step<A: Guarded, R>(
    actor: &mut A,
    ctx: &mut Context<A>,
    body: impl FnOnce(&mut A, &mut Context<A>) -> R,
) -> Option<R> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| body(&mut *actor, &mut *ctx))) {
        Ok(result) => Some(result),
        Err(panic) => {
            error!(actor.log(), "actor panicked; restarting it";
                   "actor" => actor.name(), "panic" => message(&*panic));
            ctx.stop();
            None
        }
    }
}

/// Runs `body`; if it panics, logs it and carries on. For the region's
/// supervisor, which nothing restarts: what it holds (addresses of the
/// actors it supervises) is not left half-changed by a routing step, and
/// a task dropped by a panic frees its slot and is reclaimed when its
/// lease expires.
pub fn survive<A: Guarded>(
    actor: &mut A,
    ctx: &mut Context<A>,
    body: impl FnOnce(&mut A, &mut Context<A>),
) {
    if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| body(&mut *actor, &mut *ctx)))
    {
        error!(actor.log(), "actor panicked; carrying on";
               "actor" => actor.name(), "panic" => message(&*panic));
    }
}

/// The future's output, or `Err(Panicked)` if it panicked.
pub fn caught<F: Future>(future: F) -> impl Future<Output = Result<F::Output, Panicked>> {
    AssertUnwindSafe(future)
        .catch_unwind()
        .map(|result| result.map_err(|panic| Panicked(message(&*panic))))
}

/// A panic caught in a future, with its message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("panicked: {0}")]
pub struct Panicked(pub String);

fn message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-text panic".to_owned())
}
