//! The Finisher: commits the outcomes of many deliveries together.
//!
//! Each delivery hands its finish over and waits for the answer; the
//! finisher takes whatever has arrived (up to a batch) and commits it with
//! one `Store::finish_many`, while the next batch gathers behind it. Nothing
//! waits on purpose: a lone finish goes at once, and under load a batch is
//! what arrived during the previous commit. A delivery is told its outcome
//! only after the commit, so nothing is acknowledged before its next state
//! is durable; when the commit fails, every finish of the batch is told, and
//! each retries on its own while its lease lasts.

use std::sync::Arc;

use remit::store::{Finish, PgStore, Store, StoreError, TransitionOutcome};
use slog::error;
use tokio::sync::{mpsc, oneshot, Semaphore};

use super::guard;

/// What a finish comes back with.
pub type Finished = Result<TransitionOutcome, FinishError>;

/// Why a finish was not committed. Nothing of its batch was written.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FinishError {
    /// The batch's commit failed; every finish of it shares the cause.
    #[error("the batch's commit failed")]
    Store(#[source] Arc<StoreError>),
    #[error("the commit panicked")]
    Panicked,
    /// The finisher is gone: the runtime is stopping.
    #[error("the runtime is stopping")]
    Stopped,
}

/// Most finishes in one commit.
pub const BATCH: usize = 256;

/// Commits in flight at once, so a batch can gather and go while the
/// previous one waits for its flush.
const WRITERS: usize = 4;

struct Job {
    finish: Finish,
    answer: oneshot::Sender<Finished>,
}

/// A handle on the region's finisher. Cheap to clone.
#[derive(Clone)]
pub struct Finisher {
    jobs: mpsc::UnboundedSender<Job>,
}

impl std::fmt::Debug for Finisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finisher").finish_non_exhaustive()
    }
}

impl Finisher {
    /// Starts the finisher on the current arbiter. It runs until every
    /// handle is dropped.
    pub fn start(store: PgStore, log: slog::Logger) -> Self {
        let (jobs, queue) = mpsc::unbounded_channel();
        actix_rt::spawn(run(store, queue, log));
        Self { jobs }
    }

    /// Commits one finish with whatever else is ready, and answers once the
    /// commit is done.
    pub async fn finish(&self, finish: Finish) -> Finished {
        let (answer, answered) = oneshot::channel();
        if self.jobs.send(Job { finish, answer }).is_err() {
            return Err(FinishError::Stopped);
        }
        answered.await.unwrap_or(Err(FinishError::Stopped))
    }
}

async fn run(store: PgStore, mut queue: mpsc::UnboundedReceiver<Job>, log: slog::Logger) {
    let writers = Arc::new(Semaphore::new(WRITERS));
    loop {
        // Wait for a free writer first: the batch keeps gathering meanwhile.
        let Ok(writer) = writers.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = queue.recv().await else {
            return;
        };
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let store = store.clone();
        let log = log.clone();
        actix_rt::spawn(async move {
            commit(&store, batch, &log).await;
            drop(writer);
        });
    }
}

async fn commit(store: &PgStore, batch: Vec<Job>, log: &slog::Logger) {
    let (finishes, answers): (Vec<Finish>, Vec<oneshot::Sender<Finished>>) = batch
        .into_iter()
        .map(|job| (job.finish, job.answer))
        .unzip();
    let written = match guard::caught(store.finish_many(&finishes)).await {
        Ok(written) => written.map_err(|e| FinishError::Store(Arc::new(e))),
        Err(panic) => {
            error!(log, "a batch of finishes panicked; each will be tried again";
                   "panic" => %panic, "finishes" => finishes.len());
            Err(FinishError::Panicked)
        }
    };
    match written {
        Ok(outcomes) => {
            for (answer, outcome) in answers.into_iter().zip(outcomes) {
                // A delivery that stopped waiting has nothing to be told.
                let _ = answer.send(Ok(outcome));
            }
        }
        Err(e) => {
            for answer in answers {
                let _ = answer.send(Err(e.clone()));
            }
        }
    }
}
