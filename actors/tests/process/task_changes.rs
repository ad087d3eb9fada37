//! `remit cancel`, `reschedule`, `erase`, `retry-now` and `tasks`: each
//! changes the database as the API would and says so in one line; a
//! refusal exits non-zero naming what is wrong.

use remit::domain::{Region, TaskState};
use remit::store::Schedule;

use crate::support::{self, TestDb};

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[actix_rt::test]
async fn an_operator_cancels_moves_erases_and_lists_from_the_command_line() {
    let db = TestDb::with_database_clock().await;
    super::run(super::remit(&db).arg("migrate"));
    let crm = support::destination(&db, "crm", Region::EU, "http://127.0.0.1:9/", None).await;
    let later = chrono::Utc::now() + chrono::Duration::days(1);
    let a = support::task_at(&db, "a", &crm, Region::EU, later).await;
    let b = support::task_at(&db, "b", &crm, Region::EU, later).await;
    let c = support::task_at(&db, "c", &crm, Region::EU, later).await;

    let out = super::run(super::remit(&db).args(["cancel", "--task", &a.to_string()]));
    assert_eq!(stdout(&out), format!("cancelled task {a}\n"));
    let out = super::run(super::remit(&db).args([
        "cancel",
        "--tenant",
        "clinic-1",
        "--reminder",
        "a",
        "--region",
        "eu",
    ]));
    assert_eq!(stdout(&out), format!("task {a} was cancelled already\n"));

    let out = super::run(super::remit(&db).args([
        "reschedule",
        "--task",
        &b.to_string(),
        "--not-before",
        "2030-01-01T09:00:00Z",
        "--payload",
        r#"{"renewal":"2030-02-01"}"#,
    ]));
    assert_eq!(
        stdout(&out),
        format!("task {b} is due at 2030-01-01T09:00:00Z\n")
    );
    let moved = db.store.task(b).await.unwrap().unwrap();
    assert_eq!(moved.not_before.to_rfc3339(), "2030-01-01T09:00:00+00:00");
    assert_eq!(
        db.store.payload(&moved).await.unwrap().body,
        br#"{"renewal":"2030-02-01"}"#
    );

    let out = super::run(super::remit(&db).args(["erase", "--task", &c.to_string()]));
    assert_eq!(
        stdout(&out),
        format!("erased the payload of task {c} (now cancelled)\n")
    );
    let erased = db.store.task(c).await.unwrap().unwrap();
    assert_eq!(erased.state, TaskState::Cancelled);
    assert_eq!(erased.cancelled.unwrap().by, "cli");

    let out = super::run(super::remit(&db).args([
        "tasks",
        "--region",
        "eu",
        "--state",
        "cancelled",
        "--format",
        "json",
    ]));
    let listed: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut ids: Vec<String> = listed
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    let mut expected = vec![a.to_string(), c.to_string()];
    expected.sort();
    assert_eq!(ids, expected);

    // The text form says when a waiting task's next attempt is due; an
    // ended one has none.
    let out = super::run(super::remit(&db).args(["tasks", "--region", "eu"]));
    let text = stdout(&out);
    let line_of = |id: &remit::domain::TaskId| {
        text.lines()
            .find(|l| l.starts_with(&id.to_string()))
            .unwrap_or_else(|| panic!("no {id} in {text}"))
            .to_owned()
    };
    assert!(
        line_of(&b).ends_with("next attempt 2030-01-01T09:00:00Z"),
        "{text}"
    );
    assert!(!line_of(&a).contains("next attempt"), "{text}");

    let out = super::run(super::remit(&db).args(["retry-now", "--destination", "crm"]));
    assert_eq!(
        stdout(&out),
        "0 tasks waiting for a retry now due (destination crm)\n"
    );
    let out = super::run(super::remit(&db).args(["erase", "--tenant", "clinic-1"]));
    assert!(
        stdout(&out).starts_with("erased 2 payloads of tenant clinic-1 (1 not ended"),
        "{}",
        stdout(&out)
    );

    // Refusals exit non-zero and say why.
    for (args, code, says) in [
        (vec!["cancel", "--task", "nope"], 2, "not a task id"),
        (
            vec![
                "reschedule",
                "--task",
                &a.to_string(),
                "--not-before",
                "soon",
            ],
            2,
            "--not-before",
        ),
        (
            vec![
                "cancel",
                "--tenant",
                "clinic-1",
                "--reminder",
                "zz",
                "--region",
                "eu",
            ],
            1,
            r#"no task of tenant "clinic-1" with reminder "zz" in region eu"#,
        ),
        (vec!["tasks", "--state", "sent"], 2, "--state"),
    ] {
        let output = super::remit(&db).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(
            stderr.contains(says),
            "{args:?} should say {says}: {stderr}"
        );
    }
}
