//! Which IP addresses a webhook may never be sent to.
//!
//! Whoever can register a destination could otherwise aim remit at the
//! machine it runs on, the cloud's metadata service or a private network,
//! and read what answered in the attempt log. Every address that is not
//! public unicast is refused here; the operator's allowlist (in the
//! runtime's configuration) opens exceptions.
//!
//! IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible,
//! NAT64, 6to4) are judged by the IPv4 address inside them: the kernel or a
//! translator on the path delivers them there.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A range remit refuses, and what it is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockedRange {
    pub network: IpAddr,
    pub prefix: u8,
    /// What the range is, in words an operator recognises.
    pub what: &'static str,
}

/// Why an address is refused: its range, and the IPv6 form that wrapped
/// it when the range is an IPv4 one reached through IPv6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocked {
    pub range: BlockedRange,
    pub via: Option<&'static str>,
}

impl std::fmt::Display for Blocked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.range;
        write!(f, "{} ({}/{})", r.what, r.network, r.prefix)?;
        if let Some(via) = self.via {
            write!(f, " in {via} form")?;
        }
        Ok(())
    }
}

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8, what: &'static str) -> BlockedRange {
    BlockedRange {
        network: IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
        prefix,
        what,
    }
}

const fn v6(segments: [u16; 8], prefix: u8, what: &'static str) -> BlockedRange {
    let [a, b, c, d, e, f, g, h] = segments;
    BlockedRange {
        network: IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h)),
        prefix,
        what,
    }
}

/// IANA's IPv4 special-purpose registry, less what is globally reachable.
/// Broadcast comes before 240/4 so it is named for what it is.
pub const IPV4_BLOCKED: &[BlockedRange] = &[
    v4(0, 0, 0, 0, 8, "unspecified or \"this network\""),
    v4(10, 0, 0, 0, 8, "private network"),
    v4(100, 64, 0, 0, 10, "carrier-grade NAT"),
    v4(127, 0, 0, 0, 8, "loopback"),
    v4(169, 254, 0, 0, 16, "link-local, including cloud metadata"),
    v4(172, 16, 0, 0, 12, "private network"),
    v4(192, 0, 0, 0, 24, "IETF protocol assignments"),
    v4(192, 0, 2, 0, 24, "documentation"),
    v4(192, 88, 99, 0, 24, "6to4 relay anycast (deprecated)"),
    v4(192, 168, 0, 0, 16, "private network"),
    v4(198, 18, 0, 0, 15, "benchmarking"),
    v4(198, 51, 100, 0, 24, "documentation"),
    v4(203, 0, 113, 0, 24, "documentation"),
    v4(224, 0, 0, 0, 4, "multicast"),
    v4(255, 255, 255, 255, 32, "broadcast"),
    v4(240, 0, 0, 0, 4, "reserved"),
];

/// IPv6 ranges refused outright. Anything outside 2000::/3, the only block
/// IANA hands out for global unicast, is refused as well (see
/// `NOT_GLOBAL_UNICAST`); the entries below that lie outside it are listed
/// so the refusal names them.
pub const IPV6_BLOCKED: &[BlockedRange] = &[
    v6([0, 0, 0, 0, 0, 0, 0, 0], 128, "unspecified"),
    v6([0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback"),
    v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, "local-use NAT64"),
    v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64, "discard-only"),
    v6(
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        23,
        "IETF protocol assignments",
    ),
    v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, "documentation"),
    v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, "documentation"),
    v6([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16, "segment routing (SRv6)"),
    v6(
        [0xfc00, 0, 0, 0, 0, 0, 0, 0],
        7,
        "unique local (private network)",
    ),
    v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "link-local"),
    v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, "site-local (deprecated)"),
    v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "multicast"),
];

/// Everything outside 2000::/3 that no entry above names.
const NOT_GLOBAL_UNICAST: BlockedRange =
    v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3, "outside global unicast");

/// Why `ip` must not be connected to, or `None` when it is public unicast.
pub fn blocked(ip: IpAddr) -> Option<Blocked> {
    match ip {
        IpAddr::V4(ip) => blocked_v4(ip).map(|range| Blocked { range, via: None }),
        IpAddr::V6(ip) => blocked_v6(ip),
    }
}

fn blocked_v4(ip: Ipv4Addr) -> Option<BlockedRange> {
    IPV4_BLOCKED
        .iter()
        .find(|r| contains(r, IpAddr::V4(ip)))
        .copied()
}

fn blocked_v6(ip: Ipv6Addr) -> Option<Blocked> {
    // The unspecified and loopback addresses also look IPv4-compatible
    // (::0.0.0.0 and ::0.0.0.1): name them for what they are.
    if ip.is_unspecified() || ip.is_loopback() {
        let range = IPV6_BLOCKED.iter().find(|r| contains(r, IpAddr::V6(ip)))?;
        return Some(Blocked {
            range: *range,
            via: None,
        });
    }
    if let Some((inner, via)) = embedded_v4(ip) {
        return blocked_v4(inner).map(|range| Blocked {
            range,
            via: Some(via),
        });
    }
    let range = IPV6_BLOCKED
        .iter()
        .find(|r| contains(r, IpAddr::V6(ip)))
        .copied()
        .or_else(|| {
            (!contains(&NOT_GLOBAL_UNICAST, IpAddr::V6(ip))).then_some(NOT_GLOBAL_UNICAST)
        })?;
    Some(Blocked { range, via: None })
}

/// The IPv4 address an IPv6 address carries, and the form it uses.
fn embedded_v4(ip: Ipv6Addr) -> Option<(Ipv4Addr, &'static str)> {
    let o = ip.octets();
    let low = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    match ip.segments() {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some((low, "IPv4-mapped")),
        [0, 0, 0, 0, 0, 0, _, _] => Some((low, "IPv4-compatible")),
        // RFC 6052's well-known NAT64 prefix, 64:ff9b::/96.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some((low, "NAT64")),
        // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 routes to AA.BB.CC.DD.
        [0x2002, ..] => Some((Ipv4Addr::new(o[2], o[3], o[4], o[5]), "6to4")),
        _ => None,
    }
}

fn contains(range: &BlockedRange, ip: IpAddr) -> bool {
    match (range.network, ip) {
        (IpAddr::V4(net), IpAddr::V4(ip)) => {
            let mask = u32::MAX
                .checked_shl(32 - u32::from(range.prefix))
                .unwrap_or(0);
            u32::from(net) & mask == u32::from(ip) & mask
        }
        (IpAddr::V6(net), IpAddr::V6(ip)) => {
            let mask = u128::MAX
                .checked_shl(128 - u32::from(range.prefix))
                .unwrap_or(0);
            u128::from(net) & mask == u128::from(ip) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
#[path = "address_tests.rs"]
mod tests;
