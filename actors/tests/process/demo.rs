//! `remit demo`, the README's first command: on PostgreSQL through
//! `--database-url`, and where no database server is reachable.

use std::process::Command;

use crate::support::{self, TestDb};

/// How long the demo may take here: its promises are what these tests
/// judge, not its speed, and a debug build on a machine busy with the rest
/// of the suite takes several times its usual 20 s.
const GIVE_UP_AFTER: &str = "10m";

#[actix_rt::test]
async fn the_demo_on_postgresql_delivers_through_a_rate_limit_and_cleans_up() {
    let url = support::db::database_url();
    let db = TestDb::with_database_clock().await;
    let demo_schemas = "SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE 'remit_demo_%'";
    let before = db.count(demo_schemas).await;
    let output = Command::new(env!("CARGO_BIN_EXE_remit"))
        .env_clear()
        .args([
            "demo",
            "--database-url",
            &url,
            "--give-up-after",
            GIVE_UP_AFTER,
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_demo_kept_its_promises(&stdout);
    assert_eq!(
        db.count(demo_schemas).await,
        before,
        "the demo drops its schema"
    );
}

/// The README's first command on a machine with no database server: the
/// demo must neither need nor touch PostgreSQL. As root it runs in a
/// network namespace of its own (only its own loopback, where nothing
/// listens on 5432); otherwise DATABASE_URL points at a closed port. Either
/// way a PostgreSQL URL is set, to prove the demo ignores it.
#[test]
fn the_demo_runs_where_no_database_server_is_reachable() {
    let isolated = Command::new("unshare")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|s| s.success());
    let binary = env!("CARGO_BIN_EXE_remit");
    let mut command = if isolated {
        let mut c = Command::new("unshare");
        c.args([
            "-n",
            "sh",
            "-c",
            "ip link set lo up && exec \"$0\" demo --give-up-after \"$1\"",
            binary,
            GIVE_UP_AFTER,
        ]);
        c
    } else {
        let mut c = Command::new(binary);
        c.args(["demo", "--give-up-after", GIVE_UP_AFTER]);
        c
    };
    let unreachable = if isolated {
        "postgres://postgres@127.0.0.1:5432/postgres"
    } else {
        "postgres://postgres@127.0.0.1:1/postgres"
    };
    let workdir =
        std::env::temp_dir().join(format!("remit-demo-test-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&workdir).unwrap();
    let output = command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", unreachable)
        .current_dir(&workdir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "remit demo exited {:?} (isolated: {isolated})\n{stdout}\n{stderr}",
        output.status.code()
    );
    assert!(stdout.contains("database: a SQLite file in"), "{stdout}");
    assert_demo_kept_its_promises(&stdout);
    // It cleans up after itself and leaves nothing in the working directory.
    assert_eq!(std::fs::read_dir(&workdir).unwrap().count(), 0);
    std::fs::remove_dir_all(&workdir).unwrap();
}

/// What every run of `remit demo` must print: every reminder delivered,
/// 429s in both forms honoured, the crashed sender's tasks delivered, no
/// request before a deadline, and no Rust debug text.
fn assert_demo_kept_its_promises(stdout: &str) {
    let line = |label: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} line in:\n{stdout}"))
            .to_owned()
    };
    assert!(
        line("delivered ").contains("2000 of 2000 reminders"),
        "{stdout}"
    );
    let limited = line("429s ");
    assert!(limited.contains("all honoured"), "{stdout}");
    assert!(
        !limited.starts_with("429s        0 received"),
        "the receiver rate-limits: {stdout}"
    );
    assert!(
        line("deadlines ").contains("no request came before"),
        "{stdout}"
    );
    let crash = line("crash ");
    let held: Vec<&str> = crash.split_whitespace().collect();
    assert_eq!(
        held[4], held[6],
        "every task the crashed sender held was delivered: {stdout}"
    );
    for debug in ["Some(", "None", "RetryWait", "Delivered {"] {
        assert!(
            !stdout.contains(debug),
            "debug text reached a person: {stdout}"
        );
    }
}
