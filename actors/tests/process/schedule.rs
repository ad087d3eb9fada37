//! `remit schedule`: one webhook with its payload from a file or standard
//! input, and many from a file with `--file`, each line answered on its own.

use remit::domain::Region;
use remit::store::Schedule;

use crate::support::{self, TestDb};

fn line(reminder: &str, destination: &str) -> String {
    format!(
        r#"{{"tenant_id":"clinic-1","reminder_id":"{reminder}","destination_id":"{destination}","region":"eu","not_before":"2030-01-01T09:00:00Z","payload":{{"n":"{reminder}"}}}}"#
    )
}

#[actix_rt::test]
async fn schedule_file_answers_each_line_and_exits_1_when_any_is_refused() {
    let db = TestDb::with_database_clock().await;
    support::destination(&db, "crm", Region::EU, "http://127.0.0.1:9/", None).await;
    let input = [
        line("a", "crm"),
        line("a", "crm"),
        String::new(),
        "{not json".to_owned(),
        line("lost", "nowhere"),
        line("b", "crm"),
        r#"["clinic-1","c","crm","eu","2030-01-01T09:00:00Z",{}]"#.to_owned(),
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
    assert_eq!(
        lines[5], "line 7: refused: must be a JSON object",
        "{stdout}"
    );
    assert_eq!(lines[6], "2 scheduled, 1 already scheduled, 3 refused");
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

/// `remit schedule --payload-file -` reads the payload from standard input,
/// so it never shows in the process list, and stores it byte for byte.
#[actix_rt::test]
async fn schedule_reads_the_payload_from_stdin_or_a_file() {
    let db = TestDb::with_database_clock().await;
    support::destination(
        &db,
        "crm",
        remit::domain::Region::EU,
        "http://127.0.0.1:9/",
        None,
    )
    .await;
    let schedule = |reminder: &str, payload_args: &[&str]| {
        let mut command = super::schedule_in_2030(&db, "eu", reminder);
        command.args(payload_args);
        command
    };
    // The key remit_command! gives the binary.
    let store = db
        .another_store(remit::payload_crypto::PayloadKey::from_bytes([7; 32]))
        .await;
    let stored = |line: String| {
        let store = store.clone();
        async move {
            let id = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            let task = store
                .task(remit::domain::TaskId(id))
                .await
                .unwrap()
                .unwrap();
            String::from_utf8(store.payload(&task).await.unwrap().body).unwrap()
        }
    };
    let payload = r#"{"z":1,"a":{"y":2,"b":3},"big":123456789012345678901234567890}"#;

    let out = super::run_with_stdin(
        &mut schedule("from-stdin", &["--payload-file", "-"]),
        payload.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stored(String::from_utf8(out.stdout).unwrap()).await,
        payload
    );

    // From a file; the newline an editor adds is not part of the value.
    let path = std::env::temp_dir().join(format!("remit-payload-{}.json", std::process::id()));
    std::fs::write(&path, format!("{payload}\n")).unwrap();
    let out = super::run(&mut schedule(
        "from-file",
        &["--payload-file", path.to_str().unwrap()],
    ));
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        stored(String::from_utf8(out.stdout).unwrap()).await,
        payload
    );

    // One source only, and one is required; not JSON names the field.
    for args in [
        &["--payload", "{}", "--payload-file", "-"][..],
        &[][..],
        &["--payload", "{\"a\":"][..],
    ] {
        let out = schedule("refused", args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("payload"), "{args:?}: {stderr}");
    }
}

/// `remit schedule --ordering-key` puts the task in a line; a key the API
/// would refuse is a usage error naming `ordering_key`, and nothing is
/// written.
#[actix_rt::test]
async fn schedule_takes_an_ordering_key() {
    let db = TestDb::with_database_clock().await;
    support::destination(&db, "crm", Region::EU, "http://127.0.0.1:9/", None).await;
    let out = super::run(super::schedule_in_2030(&db, "eu", "keyed").args([
        "--payload",
        "{}",
        "--ordering-key",
        "patient-7",
    ]));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let id = stdout.split_whitespace().nth(1).unwrap().parse().unwrap();
    let task = db
        .store
        .task(remit::domain::TaskId(id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        task.ordering_key.as_ref().map(|k| k.as_str()),
        Some("patient-7")
    );

    let out = super::schedule_in_2030(&db, "eu", "blank")
        .args(["--payload", "{}", "--ordering-key", " "])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("ordering_key"), "{stderr}");
    assert_eq!(
        db.count("SELECT count(*) AS n FROM tasks WHERE reminder_id = 'blank'")
            .await,
        0
    );
}
