//! How many claimed tasks this process holds in memory (queued in a
//! throttle or in flight in a sender). The claimer never claims past the
//! bound, and shutdown waits for the count to reach zero.
//!
//! It lives outside the actors so that a restarted claimer or sender does
//! not forget what is still held.

use std::cell::Cell;
use std::rc::Rc;

use tokio::sync::Notify;

#[derive(Debug, Clone)]
pub struct Capacity {
    inner: Rc<Inner>,
}

#[derive(Debug)]
struct Inner {
    max: usize,
    held: Cell<usize>,
    drained: Notify,
}

impl Capacity {
    pub fn new(max: usize) -> Self {
        Self {
            inner: Rc::new(Inner {
                max: max.max(1),
                held: Cell::new(0),
                drained: Notify::new(),
            }),
        }
    }

    /// How many more tasks may be claimed now.
    pub fn free(&self) -> usize {
        self.inner.max.saturating_sub(self.inner.held.get())
    }

    pub fn held(&self) -> usize {
        self.inner.held.get()
    }

    pub fn take(&self, n: usize) {
        self.inner.held.set(self.inner.held.get() + n);
    }

    /// One task left memory: finished, released or abandoned to its lease.
    pub fn give_back(&self) {
        let held = self.inner.held.get().saturating_sub(1);
        self.inner.held.set(held);
        if held == 0 {
            self.inner.drained.notify_waiters();
        }
    }

    /// Resolves once nothing is held.
    pub async fn drained(&self) {
        loop {
            let notified = self.inner.drained.notified();
            if self.held() == 0 {
                return;
            }
            notified.await;
        }
    }
}
