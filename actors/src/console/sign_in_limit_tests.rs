use std::net::IpAddr;
use std::time::{Duration, Instant};

use super::{LimitRule, SignInLimit, Verdict};

const RULE: LimitRule = LimitRule {
    failures: 3,
    window: Duration::from_secs(60),
    lockout: Duration::from_secs(300),
};

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn locked_for(retry_after: Duration) -> Verdict {
    Verdict::LockedOut { retry_after }
}

#[test]
fn the_nth_failure_in_the_window_locks_the_address_out_for_the_lockout() {
    let start = Instant::now();
    let mut limit = SignInLimit::new(RULE, 100);
    let client = ip("192.0.2.7");
    assert_eq!(limit.check(client, start), Verdict::Allowed);
    assert_eq!(limit.failed(client, start), None);
    assert_eq!(limit.failed(client, start + secs(10)), None);
    assert_eq!(limit.check(client, start + secs(20)), Verdict::Allowed);
    assert_eq!(limit.failed(client, start + secs(20)), Some(secs(300)));
    // Refused for the rest of the lockout, counting down.
    assert_eq!(limit.check(client, start + secs(20)), locked_for(secs(300)));
    assert_eq!(limit.check(client, start + secs(319)), locked_for(secs(1)));
    // A failure reported while locked out (a race) neither starts the
    // lockout again nor extends it.
    assert_eq!(limit.failed(client, start + secs(120)), None);
    assert_eq!(
        limit.check(client, start + secs(120)),
        locked_for(secs(200))
    );
    assert_eq!(limit.check(client, start + secs(320)), Verdict::Allowed);
    // Afterwards the count starts again from nothing.
    assert_eq!(limit.failed(client, start + secs(321)), None);
    assert_eq!(limit.failed(client, start + secs(322)), None);
    assert_eq!(limit.failed(client, start + secs(323)), Some(secs(300)));
}

#[test]
fn failures_spread_wider_than_the_window_never_lock_out() {
    let start = Instant::now();
    let mut limit = SignInLimit::new(RULE, 100);
    let client = ip("192.0.2.7");
    for n in 0..20 {
        // Two failures a window: the third always falls in the next one.
        let at = start + secs(31 * n);
        assert_eq!(limit.failed(client, at), None, "failure {n}");
        assert_eq!(limit.check(client, at), Verdict::Allowed, "failure {n}");
    }
}

#[test]
fn each_address_has_its_own_count() {
    let start = Instant::now();
    let mut limit = SignInLimit::new(RULE, 100);
    let (guesser, colleague) = (ip("192.0.2.7"), ip("192.0.2.8"));
    for _ in 0..3 {
        limit.failed(guesser, start);
    }
    assert_eq!(limit.check(guesser, start), locked_for(secs(300)));
    assert_eq!(limit.check(colleague, start), Verdict::Allowed);
    assert_eq!(limit.failed(colleague, start), None);
}

#[test]
fn an_ipv6_host_counts_once_for_its_64_and_mapped_ipv4_is_ipv4() {
    let start = Instant::now();
    let mut limit = SignInLimit::new(RULE, 100);
    limit.failed(ip("2001:db8:1:2::1"), start);
    limit.failed(ip("2001:db8:1:2:ffff::9"), start);
    limit.failed(ip("2001:db8:1:2:abcd:1:2:3"), start);
    assert_eq!(
        limit.check(ip("2001:db8:1:2::77"), start),
        locked_for(secs(300))
    );
    assert_eq!(limit.check(ip("2001:db8:1:3::1"), start), Verdict::Allowed);

    limit.failed(ip("198.51.100.4"), start);
    limit.failed(ip("::ffff:198.51.100.4"), start);
    limit.failed(ip("198.51.100.4"), start);
    assert_eq!(
        limit.check(ip("::ffff:198.51.100.4"), start),
        locked_for(secs(300))
    );
}

#[test]
fn the_table_holds_at_most_cap_addresses_dropping_ended_ones_first() {
    let start = Instant::now();
    let mut limit = SignInLimit::new(RULE, 4);
    // A locked-out address, then three that failed once, a window ago.
    for _ in 0..3 {
        limit.failed(ip("192.0.2.1"), start);
    }
    for n in 2..5 {
        limit.failed(ip(&format!("192.0.2.{n}")), start);
    }
    assert_eq!(limit.tracked(), 4);
    // Their windows are over, the lockout is not: room is made from them.
    let later = start + secs(61);
    limit.failed(ip("192.0.2.9"), later);
    assert_eq!(limit.tracked(), 2);
    assert_eq!(limit.check(ip("192.0.2.1"), later), locked_for(secs(239)));

    // Full of live entries: the one whose count started earliest goes.
    limit.failed(ip("192.0.2.10"), later + secs(1));
    limit.failed(ip("192.0.2.11"), later + secs(2));
    assert_eq!(limit.tracked(), 4);
    limit.failed(ip("192.0.2.12"), later + secs(3));
    assert_eq!(limit.tracked(), 4);
    assert_eq!(
        limit.check(ip("192.0.2.1"), later + secs(3)),
        Verdict::Allowed,
        "the oldest entry was dropped"
    );
    // A flood of fresh addresses never grows the table past its cap.
    for n in 0..1000u32 {
        let address = IpAddr::from([10, 0, (n / 256) as u8, (n % 256) as u8]);
        limit.failed(address, later + secs(4));
        assert!(limit.tracked() <= 4);
    }
}
