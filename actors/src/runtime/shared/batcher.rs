//! Many small store calls made as one: callers hand in one request each and
//! wait for their own answer, while a batcher takes whatever has arrived
//! (up to a batch) and makes one call for all of it; the next batch gathers
//! while that call runs. Nothing waits on purpose: a lone request goes at
//! once, and under load a batch is what arrived during the previous call.
//!
//! A caller is answered only after the call returned, so nothing is
//! acknowledged before the store has it; when the call fails, every request
//! of the batch is told, and each caller decides on its own what next.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use remit::store::StoreError;
use slog::error;
use tokio::sync::{mpsc, oneshot, Semaphore};

use super::guard;

/// Why a request got no answer from the store. Nothing of its batch was
/// written.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BatchError {
    /// The batch's call failed; every request of it shares the cause.
    #[error("the batch's store call failed")]
    Store(#[source] Arc<StoreError>),
    #[error("the batch's store call panicked")]
    Panicked,
    /// The batcher is gone: the runtime is stopping.
    #[error("the runtime is stopping")]
    Stopped,
}

type Answer<R> = oneshot::Sender<Result<R, BatchError>>;

/// A handle on one batcher. Cheap to clone.
pub struct Batcher<T, R> {
    requests: mpsc::UnboundedSender<(T, Answer<R>)>,
}

impl<T, R> Clone for Batcher<T, R> {
    fn clone(&self) -> Self {
        Self {
            requests: self.requests.clone(),
        }
    }
}

impl<T, R> std::fmt::Debug for Batcher<T, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batcher").finish_non_exhaustive()
    }
}

impl<T: 'static, R: 'static> Batcher<T, R> {
    /// Starts a batcher on the current arbiter that makes at most `calls`
    /// calls at once, each with at most `batch` requests. `call` must answer
    /// every request, in order. It runs until every handle is dropped.
    pub fn start<F, Fut>(
        name: &'static str,
        calls: usize,
        batch: usize,
        log: slog::Logger,
        call: F,
    ) -> Self
    where
        F: Fn(Vec<T>) -> Fut + 'static,
        Fut: Future<Output = Result<Vec<R>, StoreError>> + 'static,
    {
        let (requests, queue) = mpsc::unbounded_channel();
        actix_rt::spawn(run(name, calls, batch, queue, log, Rc::new(call)));
        Self { requests }
    }

    /// Hands in one request and waits for its answer.
    pub async fn call(&self, request: T) -> Result<R, BatchError> {
        let (answer, answered) = oneshot::channel();
        if self.requests.send((request, answer)).is_err() {
            return Err(BatchError::Stopped);
        }
        answered.await.unwrap_or(Err(BatchError::Stopped))
    }
}

async fn run<T: 'static, R: 'static, F, Fut>(
    name: &'static str,
    calls: usize,
    batch: usize,
    mut queue: mpsc::UnboundedReceiver<(T, Answer<R>)>,
    log: slog::Logger,
    call: Rc<F>,
) where
    F: Fn(Vec<T>) -> Fut + 'static,
    Fut: Future<Output = Result<Vec<R>, StoreError>> + 'static,
{
    let running = Arc::new(Semaphore::new(calls.max(1)));
    loop {
        // Wait for a free call first: the batch keeps gathering meanwhile.
        let Ok(slot) = running.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = queue.recv().await else {
            return;
        };
        let mut gathered = vec![first];
        while gathered.len() < batch {
            match queue.try_recv() {
                Ok(request) => gathered.push(request),
                Err(_) => break,
            }
        }
        let (requests, answers): (Vec<T>, Vec<Answer<R>>) = gathered.into_iter().unzip();
        let call = call.clone();
        let log = log.clone();
        actix_rt::spawn(async move {
            let count = requests.len();
            let result = match guard::caught(call(requests)).await {
                Ok(Ok(results)) if results.len() == count => Ok(results),
                Ok(Ok(results)) => {
                    error!(log, "a batch came back with the wrong number of answers";
                           "batcher" => name, "asked" => count, "answered" => results.len());
                    Err(BatchError::Panicked)
                }
                Ok(Err(e)) => Err(BatchError::Store(Arc::new(e))),
                Err(panic) => {
                    error!(log, "a batch panicked; each request will be tried again";
                           "batcher" => name, "panic" => %panic, "requests" => count);
                    Err(BatchError::Panicked)
                }
            };
            match result {
                Ok(results) => {
                    for (answer, result) in answers.into_iter().zip(results) {
                        // A caller that stopped waiting has nothing to be told.
                        let _ = answer.send(Ok(result));
                    }
                }
                Err(e) => {
                    for answer in answers {
                        let _ = answer.send(Err(e.clone()));
                    }
                }
            }
            drop(slot);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_rt::test]
    async fn requests_that_arrive_together_share_one_call_and_get_their_own_answers() {
        let calls = Rc::new(std::cell::RefCell::new(Vec::new()));
        let seen = calls.clone();
        let log = slog::Logger::root(slog::Discard, slog::o!());
        let doubler = Batcher::start("test", 1, 8, log, move |batch: Vec<u32>| {
            seen.borrow_mut().push(batch.len());
            async move { Ok(batch.into_iter().map(|n| n * 2).collect()) }
        });
        let answers = futures_util::future::join_all((1..=5).map(|n| doubler.call(n))).await;
        let answers: Vec<u32> = answers.into_iter().map(Result::unwrap).collect();
        assert_eq!(answers, vec![2, 4, 6, 8, 10]);
        let calls = calls.borrow();
        assert!(calls.len() < 5, "some requests shared a call: {calls:?}");
        assert_eq!(calls.iter().sum::<usize>(), 5);
    }

    #[actix_rt::test]
    async fn a_failed_call_is_told_to_every_request_of_its_batch() {
        let log = slog::Logger::root(slog::Discard, slog::o!());
        let failing = Batcher::start("test", 1, 8, log, |_: Vec<u32>| async {
            Err::<Vec<u32>, _>(StoreError::Migration("down".into()))
        });
        let answers = futures_util::future::join_all((1..=3).map(|n| failing.call(n))).await;
        assert!(answers
            .iter()
            .all(|a| matches!(a, Err(BatchError::Store(_)))));
    }
}
