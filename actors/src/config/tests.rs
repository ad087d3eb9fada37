use super::*;
use remit::domain::Region;

#[test]
fn the_example_file_is_valid_and_matches_the_defaults() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/remit.example.toml");
    let from_file: Config = Figment::from(Serialized::defaults(Config::default()))
        .merge(Toml::file_exact(&path))
        .extract()
        .unwrap();
    from_file.validate().unwrap();
    assert_eq!(
        serde_json::to_value(&from_file).unwrap(),
        serde_json::to_value(Config::default()).unwrap(),
        "the example documents the defaults"
    );
}

#[test]
fn bad_values_name_their_key() {
    let mut config = Config::default();
    config.send.timeout_ms = config.lease.seconds * 1000;
    assert!(config
        .validate()
        .unwrap_err()
        .to_string()
        .contains("send.timeout_ms"));
    let mut config = Config::default();
    config.throttle.default.rate_per_second = 0.0;
    assert!(config
        .validate()
        .unwrap_err()
        .to_string()
        .contains("throttle.default.rate_per_second"));
    let mut config = Config::default();
    config.retry.retryable_statuses.push(700);
    assert!(config
        .validate()
        .unwrap_err()
        .to_string()
        .contains("retryable_statuses"));
    let mut config = Config::default();
    config.send.allow_hosts = vec!["127.0.0.0/8".into(), "10.0.0.0/40".into()];
    let err = config.validate().unwrap_err().to_string();
    assert!(
        err.contains("send.allow_hosts") && err.contains("10.0.0.0/40"),
        "{err}"
    );
    for bind in ["9464", "localhost", "127.0.0.1:x", "127.0.0.1:8080"] {
        let mut config = Config::default();
        config.metrics.bind = Some(bind.into());
        let err = config.validate().unwrap_err().to_string();
        assert!(err.contains("metrics.bind"), "{bind}: {err}");
    }
    let mut config = Config::default();
    config.metrics.bind = Some("0.0.0.0:9464".into());
    config.validate().unwrap();
    let mut config = Config::default();
    config.api.pool_size = 0;
    let err = config.validate().unwrap_err().to_string();
    assert!(
        err.contains("api.pool_size") && err.contains("at least 1"),
        "{err}"
    );
}

#[test]
fn values_too_large_for_arithmetic_are_refused_by_name() {
    let mut config = Config::default();
    config.retry.max_server_delay_seconds = u64::MAX;
    let err = config.validate().unwrap_err().to_string();
    assert!(err.contains("retry.max_server_delay_seconds"), "{err}");
    let mut config = Config::default();
    config.lease.seconds = u64::MAX;
    let err = config.validate().unwrap_err().to_string();
    assert!(err.contains("lease.seconds"), "{err}");
    let mut config = Config::default();
    config.send.timeout_ms = u64::MAX;
    let err = config.validate().unwrap_err().to_string();
    assert!(err.contains("send.timeout_ms"), "{err}");
    // The largest accepted values still make a working policy.
    let mut config = Config::default();
    config.retry.max_server_delay_seconds = 365 * 24 * 3600;
    config.retry.backoff_cap_seconds = 365 * 24 * 3600;
    config.retry.horizon_hours = 10 * 365 * 24;
    config.validate().unwrap();
    let policy = config.retry_policy();
    let observed = remit::policy::Observed {
        attempt: 1,
        retry_horizon_at: chrono::DateTime::<chrono::Utc>::MAX_UTC,
        started_at: chrono::Utc::now(),
        received_at: chrono::Utc::now(),
        server_date: None,
        response: Ok((429, Some("99999999999999999999".into()))),
    };
    let decision = remit::policy::decide(&observed, &policy, &mut rand::rng());
    assert!(decision.retry_delay().is_some());
}

#[test]
fn a_file_with_an_unknown_key_is_refused_by_name() {
    let dir = std::env::temp_dir().join(format!("remit-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(&path, "[lease]\nsecondz = 3\n").unwrap();
    let err = Config::load(Some(&path)).unwrap_err().to_string();
    assert!(err.contains("secondz"), "{err}");
}

#[test]
fn the_lease_owner_is_read_under_its_former_name_too() {
    let dir = std::env::temp_dir().join(format!("remit-config-owner-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (file, key) in [("new.toml", "lease_owner"), ("old.toml", "consumer_id")] {
        let path = dir.join(file);
        std::fs::write(&path, format!("{key} = \"us-worker-1\"\n")).unwrap();
        let config = Config::load(Some(&path)).unwrap();
        assert_eq!(config.lease_owner(), "us-worker-1", "{key}");
    }
}

#[test]
fn retention_settings_are_bounded_and_named() {
    let retention = Config::default().retention;
    assert!(retention.enabled);
    assert_eq!(retention.keep(), chrono::Duration::days(30));
    assert_eq!(retention.audit_keep(), chrono::Duration::days(365));
    assert_eq!(retention.stats_keep(), chrono::Duration::days(7));
    for (key, value) in [
        ("keep_days", 0),
        ("keep_days", u64::MAX),
        ("audit_keep_days", 0),
        ("audit_keep_days", u64::MAX),
        ("stats_keep_days", 0),
        ("stats_keep_days", u64::MAX),
        ("batch_size", 0),
        ("batch_size", 10_001),
        ("interval_seconds", 0),
        ("interval_seconds", 24 * 3600 + 1),
    ] {
        let mut config = Config::default();
        let r = &mut config.retention;
        match key {
            "keep_days" => r.keep_days = value,
            "audit_keep_days" => r.audit_keep_days = value,
            "stats_keep_days" => r.stats_keep_days = value,
            "batch_size" => r.batch_size = u32::try_from(value).unwrap(),
            _ => r.interval_seconds = value,
        }
        let err = config.validate().unwrap_err().to_string();
        assert!(
            err.contains(&format!("retention.{key}")) && err.contains("between 1 and"),
            "{key} = {value}: {err}"
        );
    }
    // Turned off, the settings must still be sound: `remit prune` uses them.
    let mut config = Config::default();
    config.retention.enabled = false;
    config.retention.batch_size = 10_000;
    config.retention.keep_days = 1;
    config.validate().unwrap();
}

#[test]
fn tracing_is_off_by_default_and_a_bad_endpoint_is_refused_by_name() {
    let config = Config::default();
    assert_eq!(config.otlp_traces_url().unwrap(), None);
    for bad in [
        "127.0.0.1:4318",
        "grpc://collector:4317",
        "http://",
        "not a url",
    ] {
        let mut config = Config::default();
        config.tracing.otlp_endpoint = Some(bad.into());
        let err = config.validate().unwrap_err().to_string();
        assert!(
            err.contains("tracing.otlp_endpoint") && err.contains("http://127.0.0.1:4318"),
            "{bad}: {err}"
        );
    }
    for (given, used) in [
        ("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"),
        (
            "https://otel.example.com/",
            "https://otel.example.com/v1/traces",
        ),
        (
            "http://collector:4318/custom/traces",
            "http://collector:4318/custom/traces",
        ),
    ] {
        let mut config = Config::default();
        config.tracing.otlp_endpoint = Some(given.into());
        config.validate().unwrap();
        assert_eq!(config.otlp_traces_url().unwrap().unwrap().as_str(), used);
    }
    let mut config = Config::default();
    config.tracing.service_name = " ".into();
    let err = config.validate().unwrap_err().to_string();
    assert!(err.contains("tracing.service_name"), "{err}");
}

#[test]
fn console_settings_are_bounded_and_named() {
    let console = Config::default().console;
    assert!(console.enabled);
    assert_eq!(console.listener, ConsoleListener::Api);
    assert_eq!(console.session_minutes, 60);
    assert!(!console.secure_cookie, "remit serves plain http");
    assert_eq!(console.sign_in_failures, 5);
    assert_eq!(console.sign_in_window_seconds, 300);
    assert_eq!(console.sign_in_lockout_seconds, 300);
    for minutes in [0, 1441] {
        let mut config = Config::default();
        config.console.session_minutes = minutes;
        let err = config.validate().unwrap_err().to_string();
        assert!(err.contains("console.session_minutes"), "{minutes}: {err}");
    }
    for failures in [0, 1001] {
        let mut config = Config::default();
        config.console.sign_in_failures = failures;
        let err = config.validate().unwrap_err().to_string();
        assert!(
            err.contains("console.sign_in_failures"),
            "{failures}: {err}"
        );
    }
    for seconds in [0, 86_401] {
        let mut config = Config::default();
        config.console.sign_in_window_seconds = seconds;
        let err = config.validate().unwrap_err().to_string();
        assert!(err.contains("console.sign_in_window_seconds"), "{err}");
        let mut config = Config::default();
        config.console.sign_in_lockout_seconds = seconds;
        let err = config.validate().unwrap_err().to_string();
        assert!(err.contains("console.sign_in_lockout_seconds"), "{err}");
    }
    let mut config = Config::default();
    config.console.listener = ConsoleListener::Metrics;
    let err = config.validate().unwrap_err().to_string();
    assert!(
        err.contains("console.listener") && err.contains("metrics.bind"),
        "{err}"
    );
    config.metrics.bind = Some("127.0.0.1:9464".into());
    config.validate().unwrap();
}

#[test]
fn the_console_is_read_from_a_file_and_a_bad_listener_is_named() {
    let dir = std::env::temp_dir().join(format!("remit-config-console-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("console.toml");
    std::fs::write(&path, "[console]\nlistener = \"loopback\"\n").unwrap();
    let err = Config::load(Some(&path)).unwrap_err().to_string();
    assert!(err.contains("listener"), "{err}");
    std::fs::write(
        &path,
        "[console]\nenabled = false\nsession_minutes = 15\nsecure_cookie = true\n",
    )
    .unwrap();
    let config = Config::load(Some(&path)).unwrap();
    assert!(!config.console.enabled);
    assert_eq!(config.console.session_minutes, 15);
    assert!(config.console.secure_cookie);
}

#[test]
fn the_alert_settings_name_their_key() {
    let refused = |change: fn(&mut Config)| {
        let mut config = Config::default();
        change(&mut config);
        config.validate().unwrap_err().to_string()
    };
    assert!(refused(|c| c.events.late_after_seconds = 0).contains("events.late_after_seconds"));
    assert!(refused(|c| c.events.window_seconds = 0).contains("events.window_seconds"));
    assert!(refused(|c| c.events.check_interval_ms = 1).contains("events.check_interval_ms"));
    assert!(refused(|c| c.events.sample_size = 101).contains("events.sample_size"));
    assert!(refused(|c| c.events.horizon_warning_seconds = 0)
        .contains("events.horizon_warning_seconds"));
    for levels in [vec![0], vec![100], vec![50, 50]] {
        let mut config = Config::default();
        config.events.failing_percents = levels;
        let e = config.validate().unwrap_err().to_string();
        assert!(e.contains("events.failing_percents"), "{e}");
    }
    let mut config = Config::default();
    config.events.failing_percents = vec![];
    config.validate().unwrap();
    let check = config.events.alert_check(Region::US);
    assert!(!check.announce, "no receiver, nothing announced");
    assert_eq!(check.late_after, chrono::Duration::minutes(5));
    assert_eq!(check.quiet_prefix, "remit-events-");
}

#[test]
fn a_pooler_needs_postgresql_and_a_direct_url_must_be_postgresql() {
    let mut config = Config::default();
    config.database.pooler = PoolerMode::Transaction;
    let refused = config.validate().unwrap_err().to_string();
    assert!(
        refused.contains("database.pooler") && refused.contains("postgres://"),
        "{refused}"
    );

    config.database.url = "postgres://remit@pgbouncer:6432/remit".into();
    config.validate().unwrap();
    config.database.direct_url = Some("sqlite://remit.db".into());
    let refused = config.validate().unwrap_err().to_string();
    assert!(refused.contains("database.direct_url"), "{refused}");
    config.database.direct_url = Some("postgres://remit@db:5432/remit".into());
    config.validate().unwrap();
    config.database.read_pooler = Some(PoolerMode::Session);
    let refused = config.validate().unwrap_err().to_string();
    assert!(
        refused.contains("database.read_pooler") && refused.contains("read_url"),
        "{refused}"
    );
    config.database.read_url = Some("postgres://remit@replica:5432/remit".into());
    config.validate().unwrap();
}

#[test]
fn the_pooler_is_read_from_a_file_and_a_bad_one_is_named() {
    let dir = std::env::temp_dir().join(format!("remit-config-pooler-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pooler.toml");
    std::fs::write(
        &path,
        "[database]\nurl = \"postgres://remit@pgbouncer:6432/remit\"\npooler = \"transaction\"\n\
         direct_url = \"postgres://remit@db:5432/remit\"\n",
    )
    .unwrap();
    let config = Config::load(Some(&path)).unwrap();
    assert_eq!(config.database.pooler, PoolerMode::Transaction);
    assert_eq!(
        config.database.direct_url.as_deref(),
        Some("postgres://remit@db:5432/remit")
    );
    std::fs::write(&path, "[database]\npooler = \"bouncer\"\n").unwrap();
    let err = Config::load(Some(&path)).unwrap_err().to_string();
    assert!(err.contains("database.pooler"), "{err}");
}
