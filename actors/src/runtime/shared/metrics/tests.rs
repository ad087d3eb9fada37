use remit::domain::{AttemptOutcome, DestinationId, Region};

use super::recording::OTHER;
use super::*;

#[test]
fn help_ends_in_one_period() {
    let text = Metrics::new(Region::EU, 2).encode();
    let helps: Vec<_> = text.lines().filter(|l| l.starts_with("# HELP")).collect();
    assert!(helps.len() > 10, "{text}");
    for help in helps {
        assert!(help.ends_with('.') && !help.ends_with(".."), "{help}");
    }
}

#[test]
fn known_label_values_start_at_zero() {
    let metrics = Metrics::new(Region::EU, 1);
    let text = metrics.encode();
    for series in [
        r#"remit_responses_total{region="eu",class="5xx"} 0"#,
        r#"remit_responses_total{region="eu",class="transport"} 0"#,
        r#"remit_terminal_failures_total{region="eu",reason="max_attempts"} 0"#,
        r#"remit_terminal_failures_total{region="eu",reason="retry_horizon"} 0"#,
        r#"remit_actor_restarts_total{region="eu",actor="sender"} 0"#,
        r#"remit_tasks{region="eu",state="retry_wait"} 0"#,
    ] {
        assert!(text.contains(series), "{series} in {text}");
    }
    // A destination's series start at 0 once it has a label, and so do
    // `other`'s once a destination is folded into it.
    for id in ["a", "b"] {
        let id = DestinationId::new(id).unwrap_or_else(|e| panic!("{e}"));
        metrics.attempt(&id, AttemptOutcome::Delivered);
    }
    let text = metrics.encode();
    for destination in ["a", OTHER] {
        for series in [
            format!(
                r#"remit_attempts_total{{region="eu",destination="{destination}",outcome="failed"}} 0"#
            ),
            format!(r#"remit_rate_limited_total{{region="eu",destination="{destination}"}} 0"#),
            format!(r#"remit_fenced_writes_total{{region="eu",destination="{destination}"}} 0"#),
        ] {
            assert!(text.contains(&series), "{series} in {text}");
        }
    }
}

#[test]
fn destinations_past_the_limit_fold_into_other() {
    let metrics = Metrics::new(Region::EU, 2);
    for id in ["a", "b", "c", "d", "a"] {
        let id = DestinationId::new(id).unwrap_or_else(|e| panic!("{e}"));
        metrics.attempt(&id, AttemptOutcome::Delivered);
        metrics.response(&id, Some(429));
    }
    let text = metrics.encode();
    assert!(
        text.contains(r#"remit_attempts_total{region="eu",destination="a",outcome="delivered"} 2"#),
        "{text}"
    );
    assert!(
        text.contains(r#"destination="other",outcome="delivered"} 2"#),
        "{text}"
    );
    assert!(!text.contains(r#"destination="c""#), "{text}");
    assert!(
        text.contains(r#"remit_responses_total{region="eu",class="4xx"} 5"#),
        "{text}"
    );
    assert!(
        text.contains(r#"remit_rate_limited_total{region="eu",destination="other"} 2"#),
        "{text}"
    );
}
