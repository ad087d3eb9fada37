//! The region's senders, handed work round-robin. Addresses stay valid
//! across restarts because each sender runs under an actix `Supervisor`.

use std::cell::Cell;
use std::rc::Rc;

use actix::Addr;

use super::sender::Sender;

#[derive(Clone)]
pub struct SenderPool {
    senders: Rc<[Addr<Sender>]>,
    next: Rc<Cell<usize>>,
}

impl std::fmt::Debug for SenderPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SenderPool({})", self.senders.len())
    }
}

impl SenderPool {
    /// `senders` must not be empty.
    pub fn new(senders: Vec<Addr<Sender>>) -> Self {
        assert!(
            !senders.is_empty(),
            "a sender pool needs at least one sender"
        );
        Self {
            senders: senders.into(),
            next: Rc::new(Cell::new(0)),
        }
    }

    pub fn next(&self) -> &Addr<Sender> {
        let i = self.next.get() % self.senders.len();
        self.next.set(i + 1);
        &self.senders[i]
    }

    pub fn all(&self) -> &[Addr<Sender>] {
        &self.senders
    }
}
