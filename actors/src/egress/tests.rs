use super::*;

fn egress(allow: &[&str], allow_plain_http: bool) -> Egress {
    let entries: Vec<String> = allow.iter().map(|e| (*e).to_owned()).collect();
    Egress::new(AllowList::parse(&entries).unwrap(), allow_plain_http)
}

fn url(text: &str) -> url::Url {
    url::Url::parse(text).unwrap()
}

#[test]
fn literal_addresses_in_refused_ranges_are_refused() {
    let strict = egress(&[], false);
    for target in [
        "https://127.0.0.1:5432/",
        "https://169.254.169.254/latest/meta-data/",
        "https://10.0.0.8/hook",
        "https://[::1]:8080/",
        "https://[::ffff:127.0.0.1]/",
        "https://[fd00::1]/",
        // `url` reads these shorthand forms as 127.0.0.1.
        "https://2130706433/",
        "https://0x7f.1/",
    ] {
        match strict.check_url(&url(target)) {
            Err(Refusal::Address { .. }) => {}
            other => panic!("{target}: {other:?}"),
        }
    }
    assert_eq!(strict.check_url(&url("https://93.184.215.14/hook")), Ok(()));
    assert_eq!(strict.check_url(&url("https://hooks.example.com/")), Ok(()));
}

#[test]
fn the_allowlist_opens_networks_and_hosts() {
    let open = egress(&["127.0.0.0/8", "::1"], false);
    assert_eq!(open.check_url(&url("https://127.0.0.1:5432/")), Ok(()));
    assert_eq!(open.check_url(&url("https://[::1]/")), Ok(()));
    assert!(open.check_url(&url("https://10.0.0.1/")).is_err());
}

#[test]
fn plain_http_needs_the_flag_or_a_listed_host() {
    let strict = egress(&[], false);
    assert_eq!(
        strict.check_url(&url("http://hooks.example.com/")),
        Err(Refusal::PlainHttp)
    );
    let flag = egress(&[], true);
    assert_eq!(flag.check_url(&url("http://hooks.example.com/")), Ok(()));
    // The flag opens plain http, not the refused ranges.
    assert!(matches!(
        flag.check_url(&url("http://127.0.0.1/")),
        Err(Refusal::Address { .. })
    ));
    let listed = egress(&["hooks.internal", "127.0.0.1"], false);
    assert_eq!(listed.check_url(&url("http://hooks.internal/")), Ok(()));
    assert_eq!(listed.check_url(&url("http://127.0.0.1:9/")), Ok(()));
    assert_eq!(
        listed.check_url(&url("http://hooks.example.com/")),
        Err(Refusal::PlainHttp)
    );
}

#[actix_rt::test]
async fn a_name_resolving_to_a_refused_address_is_refused() {
    let strict = egress(&[], false);
    match strict.resolve("localhost", 80).await {
        Err(ResolveError::Refused(Refusal::Host { host, why, .. })) => {
            assert_eq!(host, "localhost");
            assert!(why.range.what.contains("loopback"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // Bracketed literals, as awc hands them over, are checked too.
    assert!(matches!(
        strict.resolve("[::1]", 80).await,
        Err(ResolveError::Refused(Refusal::Host { .. }))
    ));
}

#[actix_rt::test]
async fn a_listed_name_or_network_resolves() {
    let by_name = egress(&["localhost"], false);
    let addresses = by_name.resolve("localhost", 8080).await.unwrap();
    assert!(!addresses.is_empty());
    assert!(addresses.iter().all(|a| a.port() == 8080));
    let by_network = egress(&["127.0.0.0/8", "::1/128"], false);
    let addresses = by_network.resolve("localhost", 8080).await.unwrap();
    assert!(addresses.iter().all(|a| a.ip().is_loopback()));
}

#[actix_rt::test]
async fn admitting_a_destination_names_the_url_and_why() {
    let strict = egress(&[], false);
    let refused = strict
        .admit(&url("https://localhost:5432/"))
        .await
        .unwrap_err();
    assert_eq!(refused.field, "url");
    assert!(
        refused.reason.contains("https://localhost:5432/") && refused.reason.contains("loopback"),
        "{}",
        refused.reason
    );
    let refused = strict
        .admit(&url("http://hooks.example.com/"))
        .await
        .unwrap_err();
    assert!(refused.reason.contains("plain http"), "{}", refused.reason);
    // A name that does not resolve yet is left to the check at connect
    // time.
    strict
        .admit(&url("https://no-such-host.invalid/"))
        .await
        .unwrap();
}
