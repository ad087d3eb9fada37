//! How many claimed tasks this process holds in memory (queued in a
//! throttle or in flight in a sender). Each held task owns a [`Slot`]: a
//! value that gives its slot back when it is dropped, so no crash, early
//! return or forgotten branch can leak one. The claimer never claims more
//! than the free slots, and shutdown waits until every slot is back.
//!
//! It lives outside the actors so that a restarted claimer or sender does
//! not forget what is still held, and it is thread-safe so the API's
//! readiness check can read it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

#[derive(Debug, Clone)]
pub struct Capacity {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    max: usize,
    permits: Arc<Semaphore>,
    /// When each held slot was taken, by slot number: the oldest tells
    /// whether something is stuck.
    taken_at: Mutex<BTreeMap<u64, Instant>>,
    next: AtomicU64,
    drained: Notify,
    /// Told whenever a slot is given back.
    freed: Notify,
}

/// One task's slot in memory. Dropping it frees the slot.
#[derive(Debug)]
pub struct Slot {
    number: u64,
    capacity: Arc<Inner>,
    /// Always `Some` until dropped; given back before anyone is told.
    permit: Option<OwnedSemaphorePermit>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut taken = self.capacity.taken_at.lock();
        taken.remove(&self.number);
        let empty = taken.is_empty();
        drop(taken);
        drop(self.permit.take());
        self.capacity.freed.notify_waiters();
        if empty {
            self.capacity.drained.notify_waiters();
        }
    }
}

impl Capacity {
    pub fn new(max: usize) -> Self {
        let max = max.max(1);
        Self {
            inner: Arc::new(Inner {
                max,
                permits: Arc::new(Semaphore::new(max)),
                taken_at: Mutex::new(BTreeMap::new()),
                next: AtomicU64::new(0),
                drained: Notify::new(),
                freed: Notify::new(),
            }),
        }
    }

    /// How many more tasks may be claimed now.
    pub fn free(&self) -> usize {
        self.inner.permits.available_permits()
    }

    /// The most tasks held at once.
    pub fn max(&self) -> usize {
        self.inner.max
    }

    pub fn held(&self) -> usize {
        self.inner.max - self.free()
    }

    /// Up to `n` slots, as many as are free.
    pub fn take(&self, n: usize) -> Vec<Slot> {
        let mut slots = Vec::with_capacity(n);
        while slots.len() < n {
            let Ok(permit) = self.inner.permits.clone().try_acquire_owned() else {
                break;
            };
            let number = self.inner.next.fetch_add(1, Ordering::Relaxed);
            self.inner.taken_at.lock().insert(number, Instant::now());
            slots.push(Slot {
                number,
                capacity: self.inner.clone(),
                permit: Some(permit),
            });
        }
        slots
    }

    /// How long the oldest slot still held has been held.
    pub fn oldest_held_for(&self) -> Option<Duration> {
        let taken = self.inner.taken_at.lock();
        let oldest = taken.values().min()?;
        Some(oldest.elapsed())
    }

    /// Resolves once at least `n` slots (at most all of them) are free, so
    /// a claim is worth its round trip.
    pub async fn slots_free(&self, n: usize) {
        let n = n.clamp(1, self.inner.max);
        loop {
            let notified = self.inner.freed.notified();
            if self.free() >= n {
                return;
            }
            notified.await;
        }
    }

    /// Resolves once nothing is held.
    pub async fn drained(&self) {
        loop {
            let notified = self.inner.drained.notified();
            if self.inner.taken_at.lock().is_empty() {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_free_themselves_when_dropped() {
        let capacity = Capacity::new(3);
        let mut slots = capacity.take(5);
        assert_eq!(slots.len(), 3, "never more than the bound");
        assert_eq!(capacity.free(), 0);
        slots.pop();
        assert_eq!(capacity.free(), 1);
        drop(slots);
        assert_eq!(capacity.free(), 3);
        assert_eq!(capacity.oldest_held_for(), None);
    }

    #[actix_rt::test]
    async fn slots_free_resolves_once_enough_slots_are_back() {
        let capacity = Capacity::new(4);
        let mut slots = capacity.take(4);
        let waiting = capacity.clone();
        let free = actix_rt::spawn(async move { waiting.slots_free(2).await });
        slots.pop();
        actix_rt::task::yield_now().await;
        assert!(!free.is_finished(), "one slot back is not two free");
        slots.pop();
        free.await.expect("two slots free");
    }

    #[actix_rt::test]
    async fn drained_resolves_when_the_last_slot_goes() {
        let capacity = Capacity::new(2);
        let slots = capacity.take(2);
        let waiting = capacity.clone();
        let done = actix_rt::spawn(async move { waiting.drained().await });
        drop(slots);
        done.await.expect("drained resolves");
    }
}
