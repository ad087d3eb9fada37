//! How many failed sign-ins each client address has made lately, and
//! whether it is locked out: `rule.failures` failures within
//! `rule.window` of the first lock the address out for `rule.lockout`.
//! Pure: every call is given `now`, so tests freeze time.
//!
//! A successful sign-in neither counts nor clears the count: a person
//! holding one valid token could otherwise interleave it with guesses at
//! another (the bootstrap token, say) and never be locked out.
//!
//! Memory is bounded: at most `cap` addresses are tracked. An entry ends
//! with its window or its lockout; when the table is full, ended entries
//! are dropped first, then the one whose count started earliest.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::time::{Duration, Instant};

/// When failures lock an address out, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitRule {
    /// Failed sign-ins that lock the address out.
    pub failures: u32,
    /// The span, from an address's first counted failure, in which they
    /// must fall.
    pub window: Duration,
    /// How long sign-ins from the address are refused.
    pub lockout: Duration,
}

/// Whether a sign-in from an address may be tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    /// Refused for `retry_after` more.
    LockedOut {
        retry_after: Duration,
    },
}

#[derive(Debug, Clone, Copy)]
enum Entry {
    /// `failures` since `since`, fewer than the rule's.
    Counting { since: Instant, failures: u32 },
    /// Refused until `until`.
    Locked { since: Instant, until: Instant },
}

impl Entry {
    /// When the entry stops mattering: its window or its lockout is over.
    fn ends(&self, rule: &LimitRule) -> Instant {
        match *self {
            Entry::Counting { since, .. } => since.checked_add(rule.window).unwrap_or(since),
            Entry::Locked { until, .. } => until,
        }
    }

    fn since(&self) -> Instant {
        match *self {
            Entry::Counting { since, .. } | Entry::Locked { since, .. } => since,
        }
    }
}

/// The failed sign-ins of at most `cap` addresses.
#[derive(Debug)]
pub struct SignInLimit {
    rule: LimitRule,
    cap: usize,
    entries: HashMap<IpAddr, Entry>,
}

impl SignInLimit {
    pub fn new(rule: LimitRule, cap: usize) -> Self {
        Self {
            rule,
            cap: cap.max(1),
            entries: HashMap::new(),
        }
    }

    /// Whether `address` may try to sign in at `now`.
    pub fn check(&mut self, address: IpAddr, now: Instant) -> Verdict {
        let key = key(address);
        match self.entries.get(&key) {
            Some(Entry::Locked { until, .. }) if now < *until => Verdict::LockedOut {
                retry_after: *until - now,
            },
            Some(entry) if now >= entry.ends(&self.rule) => {
                self.entries.remove(&key);
                Verdict::Allowed
            }
            _ => Verdict::Allowed,
        }
    }

    /// `address` failed to sign in at `now`; `Some(lockout)` when this
    /// failure locks it out.
    pub fn failed(&mut self, address: IpAddr, now: Instant) -> Option<Duration> {
        let key = key(address);
        let counted = match self.entries.get(&key) {
            Some(entry) if now < entry.ends(&self.rule) => match *entry {
                Entry::Counting { since, failures } => (since, failures.saturating_add(1)),
                // Tried before another request locked the address out (a
                // race): the lockout runs as it is, neither started again
                // nor made longer.
                Entry::Locked { .. } => return None,
            },
            _ => (now, 1),
        };
        if !self.entries.contains_key(&key) {
            self.make_room(now);
        }
        let (since, failures) = counted;
        if failures >= self.rule.failures {
            let until = now.checked_add(self.rule.lockout).unwrap_or(now);
            self.entries.insert(key, Entry::Locked { since, until });
            Some(self.rule.lockout)
        } else {
            self.entries
                .insert(key, Entry::Counting { since, failures });
            None
        }
    }

    /// Addresses tracked now.
    #[cfg(test)]
    pub fn tracked(&self) -> usize {
        self.entries.len()
    }

    /// Room for one more address: ended entries go first, then, if the
    /// table is still full, the one whose count started earliest (an
    /// address that wants its lockout forgotten must fill the table with
    /// `cap` other addresses, and then it has them to guess from anyway).
    fn make_room(&mut self, now: Instant) {
        if self.entries.len() < self.cap {
            return;
        }
        let rule = self.rule;
        self.entries.retain(|_, entry| now < entry.ends(&rule));
        while self.entries.len() >= self.cap {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, entry)| entry.since())
                .map(|(address, _)| *address);
            match oldest {
                Some(address) => self.entries.remove(&address),
                None => break,
            };
        }
    }
}

/// The address a count belongs to: an IPv4 address (also when written as
/// IPv4-mapped IPv6), or an IPv6 address's /64, the block one host is
/// usually given, so that one host cannot take a fresh count per address.
fn key(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let network = u128::from(v6) & !u128::from(u64::MAX);
                IpAddr::V6(Ipv6Addr::from(network))
            }
        },
    }
}

#[cfg(test)]
#[path = "sign_in_limit_tests.rs"]
mod tests;
