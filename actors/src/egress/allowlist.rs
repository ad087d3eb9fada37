//! `send.allow_hosts`: the operator's exceptions to the refused ranges.
//!
//! An entry is a CIDR (`10.20.0.0/16`), a single IP address (`127.0.0.1`,
//! `::1`) or a host name (`localhost`, `hooks.internal`). A network opens
//! the addresses inside it, whatever name led there; a host name opens every
//! address that name resolves to, and plain http to it.

use std::net::IpAddr;

use ipnet::IpNet;
use remit::domain::quoted;

/// The parsed allowlist.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    networks: Vec<IpNet>,
    /// Lower case, IDNA-encoded, without a trailing dot: as `url` writes
    /// a URL's host.
    hosts: Vec<String>,
}

/// What `send.allow_hosts` accepts, for error messages.
pub const ACCEPTED: &str =
    "accepted: a CIDR such as 10.0.0.0/8, an IP address such as 127.0.0.1, or a host name such as localhost";

impl AllowList {
    /// Parses every entry, or says which one is wrong and why.
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        let mut list = AllowList::default();
        for entry in entries {
            let text = entry.trim();
            if let Ok(network) = text.parse::<IpNet>() {
                list.networks.push(network.trunc());
            } else if let Ok(ip) = text.parse::<IpAddr>() {
                list.networks.push(IpNet::from(ip));
            } else if text
                .split_once('/')
                .is_some_and(|(address, _)| address.parse::<IpAddr>().is_ok())
            {
                return Err(format!("{} is not a valid CIDR; {ACCEPTED}", quoted(entry)));
            } else if text.contains('*') {
                return Err(format!(
                    "{}: wildcards are not supported, list each host name; {ACCEPTED}",
                    quoted(entry)
                ));
            } else {
                list.hosts.push(host_name(entry, text)?);
            }
        }
        Ok(list)
    }

    /// Whether `ip` lies inside an allowlisted network.
    pub fn allows_address(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.networks.iter().any(|n| n.contains(&ip))
    }

    /// Whether `host` (a URL's host, as written there) is allowlisted by
    /// name.
    pub fn allows_host(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.');
        self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
    }
}

/// An IPv4-mapped IPv6 address is the IPv4 address for the allowlist too,
/// so `127.0.0.0/8` also opens `::ffff:127.0.0.1`.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// A host name as a URL would carry it, or why `text` is not one.
fn host_name(entry: &str, text: &str) -> Result<String, String> {
    let bare = text.trim_end_matches('.');
    match url::Host::parse(bare) {
        Ok(url::Host::Domain(name)) if !name.is_empty() => Ok(name),
        // Anything else, including shorthand such as `127.1` that `url`
        // reads as an address: an operator should write the address out.
        _ => Err(format!(
            "{} is neither a CIDR, an IP address nor a host name; {ACCEPTED}",
            quoted(entry)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> AllowList {
        AllowList::parse(&entries.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>()).unwrap()
    }

    fn error(entry: &str) -> String {
        AllowList::parse(&[entry.to_owned()]).unwrap_err()
    }

    #[test]
    fn networks_addresses_and_names_are_accepted() {
        let allow = list(&[
            "127.0.0.0/8",
            "10.1.2.3",
            "fd00::/8",
            "::1",
            "LocalHost",
            "hooks.internal.",
        ]);
        for open in [
            "127.0.0.1",
            "127.9.9.9",
            "10.1.2.3",
            "fd12::1",
            "::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(allow.allows_address(open.parse().unwrap()), "{open}");
        }
        for closed in ["10.1.2.4", "169.254.169.254", "fe80::1", "::2"] {
            assert!(!allow.allows_address(closed.parse().unwrap()), "{closed}");
        }
        assert!(allow.allows_host("localhost"));
        assert!(allow.allows_host("LOCALHOST."));
        assert!(allow.allows_host("hooks.internal"));
        assert!(!allow.allows_host("hooks.internal.example"));
        assert!(!allow.allows_host("127.0.0.1"));
    }

    #[test]
    fn a_network_with_host_bits_set_covers_its_whole_prefix() {
        let allow = list(&["192.168.1.7/24"]);
        assert!(allow.allows_address("192.168.1.200".parse().unwrap()));
    }

    #[test]
    fn bad_entries_are_refused_with_what_is_accepted() {
        for (entry, says) in [
            ("10.0.0.0/33", "not a valid CIDR"),
            ("10.0.0.0/", "not a valid CIDR"),
            ("hooks/path", "neither"),
            ("*.example.com", "wildcards"),
            ("", "neither"),
            ("hooks.example.com:443", "neither"),
            ("http://hooks.example.com", "neither"),
            ("a b", "neither"),
            ("127.1", "neither"),
        ] {
            let message = error(entry);
            assert!(message.contains(says), "{entry:?}: {message}");
            assert!(message.contains("accepted:"), "{message}");
        }
    }
}
