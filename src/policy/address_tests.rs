use super::*;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

/// Each refused range, by an address at its start, inside it and at its
/// end, with the words the refusal uses.
#[test]
fn every_blocked_ipv4_range_is_refused_and_named() {
    let table = [
        ("0.0.0.0", "unspecified"),
        ("0.255.255.255", "unspecified"),
        ("10.0.0.0", "private network"),
        ("10.255.255.255", "private network"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("100.127.255.255", "carrier-grade NAT"),
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("169.254.169.254", "link-local"),
        ("169.254.0.1", "link-local"),
        ("172.16.0.1", "private network"),
        ("172.31.255.255", "private network"),
        ("192.0.0.8", "IETF protocol assignments"),
        ("192.0.2.1", "documentation"),
        ("192.88.99.1", "6to4 relay"),
        ("192.168.0.1", "private network"),
        ("192.168.255.255", "private network"),
        ("198.18.0.1", "benchmarking"),
        ("198.19.255.255", "benchmarking"),
        ("198.51.100.7", "documentation"),
        ("203.0.113.9", "documentation"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"),
        ("254.1.2.3", "reserved"),
        ("255.255.255.255", "broadcast"),
    ];
    for (address, what) in table {
        let refused = blocked(ip(address)).unwrap_or_else(|| panic!("{address} passed"));
        assert!(
            refused.range.what.contains(what),
            "{address}: {refused}, expected {what}"
        );
        assert_eq!(refused.via, None);
    }
}

#[test]
fn every_blocked_ipv6_range_is_refused_and_named() {
    let table = [
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("64:ff9b:1::1", "local-use NAT64"),
        ("100::1", "discard-only"),
        ("2001::1", "IETF protocol assignments"),
        ("2001:1ff::1", "IETF protocol assignments"),
        ("2001:db8::1", "documentation"),
        ("3fff:fff::1", "documentation"),
        ("5f00::1", "segment routing"),
        ("fc00::1", "unique local"),
        ("fdff:ffff::1", "unique local"),
        ("fe80::1", "link-local"),
        ("febf::1", "link-local"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        ("4000::1", "outside global unicast"),
        ("1::1", "outside global unicast"),
        ("e000::1", "outside global unicast"),
    ];
    for (address, what) in table {
        let refused = blocked(ip(address)).unwrap_or_else(|| panic!("{address} passed"));
        assert!(
            refused.range.what.contains(what),
            "{address}: {refused}, expected {what}"
        );
        assert_eq!(refused.via, None, "{address}");
    }
}

/// An IPv4 address wrapped in IPv6 is judged as the IPv4 address.
#[test]
fn ipv6_forms_of_blocked_ipv4_addresses_are_refused() {
    let table = [
        ("::ffff:127.0.0.1", "loopback", "IPv4-mapped"),
        ("::ffff:169.254.169.254", "link-local", "IPv4-mapped"),
        ("::ffff:10.1.2.3", "private network", "IPv4-mapped"),
        ("::127.0.0.1", "loopback", "IPv4-compatible"),
        ("::192.168.1.1", "private network", "IPv4-compatible"),
        ("64:ff9b::127.0.0.1", "loopback", "NAT64"),
        ("64:ff9b::a9fe:a9fe", "link-local", "NAT64"),
        ("2002:7f00:1::1", "loopback", "6to4"),
        ("2002:a00:1::", "private network", "6to4"),
    ];
    for (address, what, via) in table {
        let refused = blocked(ip(address)).unwrap_or_else(|| panic!("{address} passed"));
        assert!(refused.range.what.contains(what), "{address}: {refused}");
        assert_eq!(refused.via, Some(via), "{address}");
        assert!(refused.to_string().contains(via), "{refused}");
    }
}

#[test]
fn public_unicast_passes() {
    for address in [
        "1.1.1.1",
        "8.8.8.8",
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "126.255.255.255",
        "128.0.0.1",
        "169.253.255.255",
        "172.15.255.255",
        "172.32.0.0",
        "192.0.1.1",
        "192.169.0.0",
        "198.17.255.255",
        "198.20.0.0",
        "223.255.255.255",
        "2606:4700:4700::1111",
        "2a00:1450:4001::200e",
        "2001:4860:4860::8888",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
    ] {
        assert_eq!(blocked(ip(address)), None, "{address}");
    }
}

#[test]
fn a_refusal_reads_as_range_and_purpose() {
    let refused = blocked(ip("169.254.169.254")).unwrap();
    assert_eq!(
        refused.to_string(),
        "link-local, including cloud metadata (169.254.0.0/16)"
    );
    let refused = blocked(ip("::ffff:127.0.0.1")).unwrap();
    assert_eq!(
        refused.to_string(),
        "loopback (127.0.0.0/8) in IPv4-mapped form"
    );
}
