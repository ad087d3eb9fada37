//! The console's one [`SignInLimit`], shared by every worker and every
//! request: the count behind a lock, the clock it reads, and the counter
//! of sign-ins it refused (`remit_console_sign_ins_refused_total` on
//! `remit run`'s /metrics; `remit console` serves no /metrics, so there the
//! counter is counted but not exported).
//!
//! The address is the connection's peer. A forwarded header
//! (`X-Forwarded-For`, `Forwarded`) is not trusted, as anyone can send
//! one: behind a proxy every sign-in comes from the proxy's address.

use std::net::{IpAddr, Ipv6Addr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::HttpRequest;
use parking_lot::Mutex;
use prometheus_client::metrics::counter::Counter;

use super::sign_in_limit::{LimitRule, SignInLimit, Verdict};

/// Addresses tracked at most, whatever the traffic: an entry is a few
/// dozen bytes, so the table stays under a megabyte.
pub const MAX_TRACKED_ADDRESSES: usize = 10_000;

/// The monotonic clock the limit reads. Tests move it forward to play the
/// end of a window or a lockout without waiting for it.
#[derive(Debug, Clone, Default)]
pub struct SignInClock {
    /// How far ahead of this host's monotonic clock it runs, in ms.
    ahead_ms: Arc<AtomicU64>,
}

impl SignInClock {
    pub fn now(&self) -> Instant {
        let now = Instant::now();
        now.checked_add(Duration::from_millis(self.ahead_ms.load(Ordering::Relaxed)))
            .unwrap_or(now)
    }

    /// Moves this clock, and every clone of it, `by` forward.
    pub fn advance(&self, by: Duration) {
        let ms = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        self.ahead_ms.fetch_add(ms, Ordering::Relaxed);
    }
}

/// The limit on failed sign-ins, shared by the console's handlers.
#[derive(Debug, Clone)]
pub struct SignInGuard {
    limit: Arc<Mutex<SignInLimit>>,
    clock: SignInClock,
    refused: Counter,
}

impl SignInGuard {
    pub fn new(rule: LimitRule) -> Self {
        Self {
            limit: Arc::new(Mutex::new(SignInLimit::new(rule, MAX_TRACKED_ADDRESSES))),
            clock: SignInClock::default(),
            // Counted apart from any registry until `count_refusals_in`.
            refused: Counter::default(),
        }
    }

    /// Counts refusals in `counter` (one registered for /metrics).
    pub fn count_refusals_in(mut self, counter: Counter) -> Self {
        self.refused = counter;
        self
    }

    /// Reads `clock` instead of this host's.
    pub fn with_clock(mut self, clock: SignInClock) -> Self {
        self.clock = clock;
        self
    }

    /// `Err(retry_after)` when `request`'s address is locked out; the
    /// refusal is counted.
    pub fn admit(&self, request: &HttpRequest) -> Result<(), Duration> {
        let verdict = self.limit.lock().check(address(request), self.clock.now());
        match verdict {
            Verdict::Allowed => Ok(()),
            Verdict::LockedOut { retry_after } => {
                self.refused.inc();
                Err(retry_after)
            }
        }
    }

    /// `request`'s sign-in failed; `Some(lockout)` when this failure locked
    /// its address out.
    pub fn failed(&self, request: &HttpRequest) -> Option<Duration> {
        self.limit.lock().failed(address(request), self.clock.now())
    }
}

/// The connection's peer. Without one (not a TCP connection, which remit
/// does not serve) every such caller shares one count: no address is not
/// a way around the limit.
fn address(request: &HttpRequest) -> IpAddr {
    request
        .peer_addr()
        .map_or(IpAddr::V6(Ipv6Addr::UNSPECIFIED), |peer| peer.ip())
}
