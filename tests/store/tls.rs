//! TLS to PostgreSQL, on clusters of the test's own (`cluster.rs`): one
//! with `ssl = on` whose pg_hba.conf accepts only `hostssl` (so a
//! connection that works is an encrypted one), one without TLS.

use remit::store::{
    ConnectFailure, Database, DatabaseConfig, Leases, Schedule, StoreError, TlsFailure,
    TransitionOutcome,
};
use std::time::Instant;

use remit::domain::{AttemptRecord, Region};

use crate::cluster::{Cluster, Tls};
use crate::support::{claim, delivered, new_task, test_key, TestDb};

async fn connect(url: &str) -> Result<Database, StoreError> {
    Database::connect(&DatabaseConfig::new(url), test_key()).await
}

/// Connecting to `url` fails at once; returns the failure and its text.
async fn refused(url: &str) -> (StoreError, String) {
    let started = Instant::now();
    let err = match connect(url).await {
        Ok(_) => panic!("{url} connected"),
        Err(e) => e,
    };
    let text = remit::error_chain(&err);
    let took = started.elapsed();
    assert!(
        took < remit_testkit::db::FAILS_FAST,
        "took {took:?}: {text}"
    );
    eprintln!("{took:?}: {text}");
    (err, text)
}

fn tls_failure(err: &StoreError) -> &TlsFailure {
    match err {
        StoreError::Connect { cause, .. } => match cause.downcast_ref::<ConnectFailure>() {
            Some(ConnectFailure::Tls(failure)) => failure,
            _ => panic!("not a TLS failure: {}", remit::error_chain(err)),
        },
        other => panic!("not a TLS failure: {}", remit::error_chain(other)),
    }
}

#[tokio::test]
async fn verify_full_with_the_right_ca_migrates_and_runs_a_task_through() {
    let Some(cluster) = Cluster::start(Tls::On) else {
        return;
    };
    let db = TestDb::in_cluster(&cluster.verified_url()).await;
    let dest = db.destination("crm", Region::US).await;
    let scheduled = db
        .store
        .schedule(new_task("tls-1", &dest, Region::US))
        .await
        .unwrap();
    let claimed = db
        .store
        .claim_due(&claim(Region::US, "us-1", 10))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.id, scheduled.task.id);
    assert_eq!(
        db.store
            .finish(
                &claimed[0].lease(),
                &claimed[0].task.destination_id,
                &delivered(AttemptRecord::default())
            )
            .await
            .unwrap(),
        TransitionOutcome::Applied
    );
    // The LISTEN connection comes through the same door.
    remit::store::Wakeups::connect(&db.store).await.unwrap();
}

#[tokio::test]
async fn a_certificate_from_another_ca_is_refused_as_such() {
    let Some(cluster) = Cluster::start(Tls::On) else {
        return;
    };
    let certs = cluster.certs.as_ref().unwrap();
    for mode in ["verify-ca", "verify-full", "require"] {
        let url = cluster.url(
            "localhost",
            "postgres",
            &format!("sslmode={mode}&sslrootcert={}", certs.other_ca.display()),
        );
        let (err, text) = refused(&url).await;
        assert!(
            matches!(tls_failure(&err), TlsFailure::UnknownCa(_)),
            "{mode}: {text}"
        );
        assert!(text.contains("not signed by a CA in sslrootcert"), "{text}");
        assert!(
            text.contains(&format!(":{}/postgres", cluster.port)),
            "{text}"
        );
    }
}

#[tokio::test]
async fn verify_full_refuses_a_certificate_for_another_host_and_verify_ca_does_not_care() {
    let Some(cluster) = Cluster::start(Tls::On) else {
        return;
    };
    let ca = cluster.certs.as_ref().unwrap().ca.display().to_string();
    // The server's certificate names `localhost` only.
    let url = cluster.url(
        "127.0.0.1",
        "postgres",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    let (err, text) = refused(&url).await;
    assert!(
        matches!(tls_failure(&err), TlsFailure::WrongHost { host, .. } if host == "127.0.0.1"),
        "{text}"
    );
    assert!(
        text.contains("not valid for the host name 127.0.0.1")
            && text.contains("it names localhost")
            && !text.contains("DnsName"),
        "{text}"
    );

    let url = cluster.url(
        "127.0.0.1",
        "postgres",
        &format!("sslmode=verify-ca&sslrootcert={ca}"),
    );
    remit::store::migrate(&url).await.unwrap();
    connect(&url).await.unwrap();
}

#[tokio::test]
async fn require_encrypts_without_checking_and_plaintext_is_turned_away() {
    let Some(cluster) = Cluster::start(Tls::On) else {
        return;
    };
    // Any certificate will do under `require` without a CA file…
    let url = cluster.url("127.0.0.1", "postgres", "sslmode=require");
    remit::store::migrate(&url).await.unwrap();
    connect(&url).await.unwrap();
    // …and `prefer` (the default) tries TLS first.
    connect(&cluster.url("127.0.0.1", "postgres", ""))
        .await
        .unwrap();
    // This server accepts only TLS.
    let (err, text) = refused(&cluster.url("127.0.0.1", "postgres", "sslmode=disable")).await;
    assert!(
        matches!(&err, StoreError::Connect { cause, .. } if matches!(cause.downcast_ref::<ConnectFailure>(), Some(ConnectFailure::Authentication(_)))),
        "{text}"
    );
    assert!(text.contains("no encryption"), "{text}");
    // `allow` tries plaintext first, then TLS when the server turns it away.
    connect(&cluster.url("127.0.0.1", "postgres", "sslmode=allow"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_client_certificate_logs_in_where_the_server_asks_for_one() {
    let Some(cluster) = Cluster::start(Tls::On) else {
        return;
    };
    let certs = cluster.certs.as_ref().unwrap();
    let ca = certs.ca.display();
    let without = cluster.url(
        "localhost",
        "remit_cert",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    let (_, text) = refused(&without).await;
    assert!(text.contains("certificate"), "{text}");

    let with = format!(
        "{without}&sslcert={}&sslkey={}",
        certs.client_cert.display(),
        certs.client_key.display()
    );
    remit::store::migrate(&with).await.unwrap();
    connect(&with).await.unwrap();
}

#[tokio::test]
async fn require_against_a_server_without_tls_says_so() {
    let Some(cluster) = Cluster::start(Tls::Off) else {
        return;
    };
    for (mode, params) in [
        ("require", "sslmode=require"),
        ("verify-full", "sslmode=verify-full&sslrootcert=system"),
    ] {
        let url = cluster.url("127.0.0.1", "postgres", params);
        let (err, text) = refused(&url).await;
        assert!(
            matches!(tls_failure(&err), TlsFailure::NotOffered(_)),
            "{mode}: {text}"
        );
        assert!(
            text.contains(&format!(
                "does not offer TLS, which sslmode={mode} requires"
            )),
            "{text}"
        );
        // `migrate` goes through the same door.
        let err = remit::store::migrate(&url).await.unwrap_err();
        assert!(matches!(tls_failure(&err), TlsFailure::NotOffered(_)));
    }
    // `prefer` falls back to plaintext; `allow` starts there.
    let url = cluster.url("127.0.0.1", "postgres", "sslmode=prefer");
    remit::store::migrate(&url).await.unwrap();
    connect(&url).await.unwrap();
    connect(&cluster.url("127.0.0.1", "postgres", "sslmode=allow"))
        .await
        .unwrap();
}

#[tokio::test]
async fn unusable_tls_settings_name_the_parameter() {
    let url = "postgres://postgres@127.0.0.1:1/postgres?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem";
    let (_, text) = refused(url).await;
    assert!(
        text.contains("/nonexistent/ca.pem") && text.contains("sslmode=verify-full"),
        "{text}"
    );
    let (_, text) = refused("postgres://postgres@127.0.0.1:1/postgres?sslmode=sometimes").await;
    assert!(text.contains("\"sometimes\""), "{text}");
}
