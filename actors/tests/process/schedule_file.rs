//! `remit schedule --file`: many webhooks from a file or standard input,
//! each line answered on its own.

use remit::domain::Region;

use crate::support::{self, TestDb};

fn line(reminder: &str, destination: &str) -> String {
    format!(
        r#"{{"tenant_id":"clinic-1","reminder_id":"{reminder}","destination_id":"{destination}","region":"eu","not_before":"2030-01-01T09:00:00Z","payload":{{"n":"{reminder}"}}}}"#
    )
}

#[actix_rt::test]
async fn schedule_file_answers_each_line_and_exits_1_when_any_is_refused() {
    let db = TestDb::with_database_clock().await;
    support::destination(&db, "crm", Region::Eu, "http://127.0.0.1:9/", None).await;
    let input = [
        line("a", "crm"),
        line("a", "crm"),
        String::new(),
        "{not json".to_owned(),
        line("lost", "nowhere"),
        line("b", "crm"),
    ]
    .join("\n");

    let output = super::run_with_stdin(
        super::remit(&db).args(["schedule", "--file", "-"]),
        input.as_bytes(),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("line 1: task "), "{stdout}");
    assert!(lines[1].starts_with("line 2: task ") && lines[1].ends_with("(already scheduled)"));
    assert!(lines[2].starts_with("line 4: refused:"), "{stdout}");
    assert!(lines[3].starts_with("line 5: refused:") && lines[3].contains("destination_id"));
    assert!(lines[4].starts_with("line 6: task "), "{stdout}");
    assert_eq!(lines[5], "2 scheduled, 1 already scheduled, 2 refused");
    assert_eq!(db.count("SELECT count(*) AS n FROM tasks").await, 2);

    // A file where every line is fine exits 0.
    let dir = std::env::temp_dir().join(format!("remit-schedule-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tasks.jsonl");
    std::fs::write(
        &path,
        format!("{}\n{}\n", line("c", "crm"), line("b", "crm")),
    )
    .unwrap();
    let output = super::remit(&db)
        .args(["schedule", "--file"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout)
        .ends_with("1 scheduled, 1 already scheduled, 0 refused\n"));

    // --file with the single-task flags is a usage error.
    let output = super::remit(&db)
        .args(["schedule", "--file", "-", "--tenant", "clinic-1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}
