//! `remit import` refuses a file with a line that breaks one of the
//! schedule's promises: exit 2, the line and the field on stderr, nothing
//! written.

use remit::domain::Region;
use remit_actors::transfer;

use crate::support::{Backend, TestDb};

/// An export whose leased task claims no attempt was ever made.
async fn a_leased_task_with_no_attempt() -> (String, usize) {
    let source = TestDb::on(Backend::Sqlite).await;
    let crm = source.destination("crm", Region::EU).await;
    source.task("renewal-42", &crm, Region::EU).await;
    assert_eq!(source.claim(Region::EU, "old-host", 1).await.len(), 1);
    let mut file = Vec::new();
    transfer::export(&source.store, &mut file).await.unwrap();
    let mut lines: Vec<serde_json::Value> = std::str::from_utf8(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let line = lines.iter().position(|l| l.get("task").is_some()).unwrap();
    lines[line]["task"]["attempt_count"] = 0.into();
    let text = lines.iter().map(|l| format!("{l}\n")).collect();
    (text, line + 1)
}

#[actix_rt::test]
async fn import_refuses_a_broken_line_and_writes_nothing() {
    let (file, line) = a_leased_task_with_no_attempt().await;
    for backend in Backend::ALL {
        let target = TestDb::on(backend).await;
        let output = super::run_with_stdin(
            super::remit(&target).args(["import", "--file", "-"]),
            file.as_bytes(),
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{backend:?}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "line {line}: attempt_count: must be at least 1 in state \"leased\""
            )),
            "{backend:?}: {stderr}"
        );
        for table in ["destinations", "tasks", "payloads"] {
            let n = target
                .count(&format!("SELECT count(*) AS n FROM {table}"))
                .await;
            assert_eq!(n, 0, "{backend:?}: nothing of the file is written");
        }
    }
}
