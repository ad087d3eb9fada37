use chrono::TimeZone;

use super::*;

fn received() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 0)
        .single()
        .unwrap_or_default()
}

fn read(fields: QuotaFields) -> Announced {
    read_quota(&fields, received(), None, Duration::minutes(10))
}

fn structured(policy: Option<&str>, current: Option<&str>) -> QuotaFields {
    QuotaFields {
        ratelimit_policy: policy.map(str::to_owned),
        ratelimit: current.map(str::to_owned),
        ..QuotaFields::default()
    }
}

fn legacy(limit: Option<&str>, remaining: Option<&str>, reset: Option<&str>) -> QuotaFields {
    QuotaFields {
        limit: limit.map(str::to_owned),
        remaining: remaining.map(str::to_owned),
        reset: reset.map(str::to_owned),
        ..QuotaFields::default()
    }
}

fn quota(remaining: u64, resets_in_ms: i64, limit: Option<u64>) -> Option<Quota> {
    Some(Quota {
        remaining,
        resets_in: Duration::milliseconds(resets_in_ms),
        limit,
        window: None,
    })
}

/// The same quota over a window its policy named.
fn over(quota: Option<Quota>, window_s: i64) -> Option<Quota> {
    quota.map(|q| Quota {
        window: Some(Duration::seconds(window_s)),
        ..q
    })
}

#[test]
fn nothing_announced_reads_as_nothing() {
    assert!(QuotaFields::default().is_empty());
    assert_eq!(read(QuotaFields::default()), Announced::default());
}

#[test]
fn the_draft_fields_give_what_remains_until_the_reset_and_the_policy_limit() {
    let got = read(structured(
        Some(r#""default";q=100;w=60"#),
        Some(r#""default";r=50;t=30"#),
    ));
    assert_eq!(got.quota, over(quota(50, 30_000, Some(100)), 60));
    assert!(got.problems.is_empty(), "{:?}", got.problems);
}

#[test]
fn a_reset_left_out_is_the_policy_window_and_a_policy_alone_is_its_whole_quota() {
    let no_t = read(structured(
        Some(r#""default";q=100;w=10"#),
        Some(r#""default";r=40"#),
    ));
    assert_eq!(no_t.quota, over(quota(40, 10_000, Some(100)), 10));
    let policy_only = read(structured(Some(r#""default";q=100;w=10"#), None));
    assert_eq!(policy_only.quota, over(quota(100, 10_000, Some(100)), 10));
    // Nothing says when it resets: nothing to pace by.
    let no_reset = read(structured(None, Some(r#""default";r=40"#)));
    assert_eq!(no_reset.quota, None);
}

#[test]
fn of_several_quotas_the_slowest_pace_wins() {
    let got = read(structured(
        Some(r#""minute";q=100;w=60, "day";q=1000;w=86400"#),
        Some(r#""minute";r=90;t=30, "day";r=10;t=300"#),
    ));
    // 10 over 300 s is slower than 90 over 30 s. Its day-long window is
    // longer than a receiver may hold remit back, so it is not kept.
    assert_eq!(got.quota, quota(10, 300_000, Some(1000)));
    let exhausted = read(structured(
        None,
        Some(r#""a";r=0;t=5, "b";r=0;t=50, "c";r=3;t=1"#),
    ));
    assert_eq!(exhausted.quota, quota(0, 50_000, None));
}

#[test]
fn tokens_and_decimals_are_read_too() {
    let got = read(structured(None, Some("default;r=7;t=1.25")));
    assert_eq!(got.quota, quota(7, 1_250, None));
}

#[test]
fn the_x_ratelimit_trio_with_a_reset_in_seconds() {
    let got = read(legacy(Some("5000"), Some("4999"), Some("42")));
    assert_eq!(got.quota, quota(4999, 42_000, Some(5000)));
    let fraction = read(legacy(None, Some("3"), Some("0.5")));
    assert_eq!(fraction.quota, quota(3, 500, None));
    // Remaining without a reset, or a limit alone, paces nothing.
    assert_eq!(read(legacy(Some("10"), Some("3"), None)).quota, None);
    assert_eq!(read(legacy(Some("10"), None, None)).quota, None);
}

#[test]
fn a_unix_time_reset_is_read_on_the_receivers_clock() {
    let reset = received().timestamp() + 90;
    let fields = legacy(None, Some("0"), Some(&reset.to_string()));
    assert_eq!(read(fields.clone()).quota, quota(0, 90_000, None));
    // The receiver's clock is 30 s ahead of ours: its reset is 60 s away.
    let server_date = received() + Duration::seconds(30);
    let got = read_quota(
        &fields,
        received(),
        Some(server_date),
        Duration::minutes(10),
    );
    assert_eq!(got.quota, quota(0, 60_000, None));
}

#[test]
fn hostile_values_are_clamped_and_reported() {
    let negative = read(structured(None, Some(r#""d";r=-5;t=-30"#)));
    assert_eq!(negative.quota, quota(0, 0, None));
    assert_eq!(negative.problems.len(), 2, "{:?}", negative.problems);

    let huge = read(structured(
        Some(r#""d";q=999999999999999;w=10"#),
        Some(r#""d";r=999999999999999;t=999999999999999"#),
    ));
    // A reset years away waits the longest a Retry-After may: 10 minutes,
    // and no window renews after it (that would hold longer).
    assert_eq!(huge.quota, quota(MAX_UNITS, 600_000, Some(MAX_UNITS)));
    assert_eq!(huge.problems.len(), 3, "{:?}", huge.problems);

    let years_away = received().timestamp() + 3 * 365 * 86_400;
    let far = read(legacy(None, Some("1"), Some(&years_away.to_string())));
    assert_eq!(far.quota, quota(1, 600_000, None));
    assert!(far.problems[0].contains("reset"), "{:?}", far.problems);
}

#[test]
fn unreadable_fields_are_reported_and_ignored() {
    for bad in ["inf", "NaN", "1e5", "twelve", "", "--1", "1.2.3"] {
        let got = read(legacy(None, Some(bad), Some("10")));
        assert_eq!(got.quota, None, "{bad:?}");
        assert_eq!(got.problems.len(), 1, "{bad:?}: {:?}", got.problems);
        assert!(
            got.problems[0].contains("X-RateLimit-Remaining"),
            "{:?}",
            got.problems
        );
    }
    let not_a_list = read(structured(None, Some("r=5, t=(")));
    assert_eq!(not_a_list.quota, None);
    assert!(
        not_a_list.problems[0].contains("RateLimit"),
        "{:?}",
        not_a_list.problems
    );
    let text_param = read(structured(None, Some(r#""d";r="many";t=5"#)));
    assert_eq!(text_param.quota, None);
    assert_eq!(text_param.problems.len(), 1, "{:?}", text_param.problems);
    let long = format!(r#""d";r=5;t=5, {}"#, r#""x";r=1;t=1, "#.repeat(100));
    let too_long = read(structured(None, Some(long.trim_end_matches(", "))));
    assert_eq!(too_long.quota, None);
    assert!(
        too_long.problems[0].contains("longer"),
        "{:?}",
        too_long.problems
    );
    // Raw field text never reaches a problem's sentence.
    let odd = read(structured(None, Some(r#""secret-name";r=?1;t=5"#)));
    assert!(odd.problems.iter().all(|p| !p.contains("secret-name")));
}

#[test]
fn a_window_is_kept_only_while_the_reset_and_one_window_fit_in_the_cap() {
    // 5 minutes to the reset and a 5-minute window: 10 minutes, the cap.
    let fits = read(structured(
        Some(r#""d";q=5;w=300"#),
        Some(r#""d";r=0;t=300"#),
    ));
    assert_eq!(fits.quota, over(quota(0, 300_000, Some(5)), 300));
    // A second longer would let one announcement hold remit back for
    // longer than a Retry-After may.
    let longer = read(structured(
        Some(r#""d";q=5;w=301"#),
        Some(r#""d";r=0;t=300"#),
    ));
    assert_eq!(longer.quota, quota(0, 300_000, Some(5)));
    assert!(longer.problems.is_empty(), "{:?}", longer.problems);
}
