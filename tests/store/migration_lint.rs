//! Every PostgreSQL migration read for the locks it takes on the tables
//! every claim and finish writes (`tasks`, `task_queue`, `task_ends`,
//! `attempts`, `payloads`, which grow to millions of rows, and
//! `destinations`, small but locked by every token take), so that `remit
//! migrate` on a live database never holds them for longer than an
//! instant:
//!
//! - an index on a hot table is built `CONCURRENTLY`, alone in a migration
//!   that runs outside a transaction (`metadata.toml`), and dropped the
//!   same way: a plain build holds a SHARE lock (no writes) for the whole
//!   build, a plain drop an ACCESS EXCLUSIVE one;
//! - on a large table, a CHECK or a foreign key is added `NOT VALID`
//!   (validating scans the table under ACCESS EXCLUSIVE), never inline
//!   with a new column, and no column changes type or becomes NOT NULL (a
//!   rewrite or a scan);
//! - a migration that takes any lock on a hot table sets `lock_timeout`
//!   of a second at most, so that queued behind a long reader it fails
//!   (and `remit migrate` tries it again) instead of stalling every write
//!   queued behind it for longer;
//! - no trigger is created on a hot table in the transaction that then
//!   backfills it (the backfill runs under the trigger's lock).
//!
//! The migrations from before the first release that break a rule are
//! listed with their measured stall (docs/operations.md, "Migrations on a
//! live database"); anything new must pass.

use std::path::{Path, PathBuf};

/// The tables that grow with the tasks: a scan or a build under lock
/// takes as long as they are large.
const LARGE: &[&str] = &["tasks", "task_queue", "task_ends", "attempts", "payloads"];

/// Every table a claim, a token take or a finish writes: any lock on one
/// must give up rather than queue.
const HOT: &[&str] = &[
    "tasks",
    "task_queue",
    "task_ends",
    "attempts",
    "payloads",
    "destinations",
];

/// Migrations written before the first release that take a lock on a
/// hot table for longer than an instant, each with what it does; their
/// stalls are measured by `benches/migrations.rs`.
const BEFORE_THE_FIRST_RELEASE: &[&str] = &[
    "2026-12-02-000001_schedule",
    "2026-12-03-000001_destination_rate",
    "2026-12-04-000001_attempts_before_replay",
    "2026-12-05-000001_queue_tables",
    "2026-12-06-000001_lean_task_updates",
    "2026-12-07-000001_regions_by_name",
    "2026-12-08-000001_rate_limited_attempts",
    "2026-12-10-000001_refused_destinations",
    "2026-12-11-000001_claim_writes_no_index",
    "2026-12-12-000001_attempts_keyed_by_task",
    "2026-12-14-000001_destination_secrets",
    "2026-12-15-000001_destination_health",
    "2026-12-16-000001_destination_quota",
    "2026-12-16-000002_ordering_key",
    "2026-12-16-000003_task_traceparent",
    "2026-12-16-000004_tenant_turns",
    "2026-12-17-000001_replay_jobs",
    "2026-12-19-000001_quota_in_flight",
    "2026-12-20-000001_narrow_queue",
];

fn migrations() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/postgres");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// The statements of a SQL file, lowercased with their whitespace
/// collapsed and comments removed; a `;` inside quotes or a dollar-quoted
/// body does not end one.
fn statements(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = sql.chars().peekable();
    let mut quote: Option<char> = None;
    let mut dollar = false;
    while let Some(c) = chars.next() {
        match (quote, dollar, c) {
            (None, false, '-') if chars.peek() == Some(&'-') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
                current.push(' ');
                continue;
            }
            (None, false, '\'') => quote = Some('\''),
            (Some('\''), _, '\'') => quote = None,
            (None, _, '$') if chars.peek() == Some(&'$') => {
                chars.next();
                current.push_str("$$");
                dollar = !dollar;
                continue;
            }
            (None, false, ';') => {
                push(&mut out, &current);
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    push(&mut out, &current);
    out
}

fn push(out: &mut Vec<String>, statement: &str) {
    let words: Vec<&str> = statement.split_whitespace().collect();
    if !words.is_empty() {
        out.push(words.join(" ").to_lowercase());
    }
}

/// The table a statement names after `keyword` (`on`, `alter table`, …),
/// without `only`, `if exists` or a schema.
fn table_after<'a>(statement: &'a str, keyword: &str) -> Option<&'a str> {
    let at = statement.find(keyword)? + keyword.len();
    statement[at..]
        .split_whitespace()
        .find(|w| !matches!(*w, "only" | "if" | "exists" | "not"))
        .map(|w| w.trim_start_matches("public.").trim_matches('"'))
}

fn hot(table: Option<&str>) -> bool {
    table.is_some_and(|t| HOT.contains(&t))
}

fn large(table: Option<&str>) -> bool {
    table.is_some_and(|t| LARGE.contains(&t))
}

/// The clauses of an `ALTER TABLE`, split at the commas outside
/// parentheses.
fn clauses(statement: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in statement.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(statement[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(statement[start..].trim());
    out
}

/// What `dir`'s migration does that holds a hot table for longer than an
/// instant.
fn problems(dir: &Path) -> Vec<String> {
    let sql = std::fs::read_to_string(dir.join("up.sql")).unwrap();
    let in_transaction = !std::fs::read_to_string(dir.join("metadata.toml"))
        .is_ok_and(|m| m.contains("run_in_transaction = false"));
    let statements = statements(&sql);
    let mut found = Vec::new();
    let mut locks_hot = false;
    let mut trigger_on: Option<String> = None;
    for s in &statements {
        if s.starts_with("create index") || s.starts_with("create unique index") {
            let table = table_after(s, " on ");
            if large(table) {
                locks_hot |= !s.contains(" concurrently ");
                if !s.contains(" concurrently ") {
                    found.push(format!(
                        "an index on {} built without CONCURRENTLY",
                        table.unwrap_or("?")
                    ));
                }
            }
        }
        if s.starts_with("drop index") && !s.contains(" concurrently ") {
            found.push("an index dropped without CONCURRENTLY".into());
        }
        if s.starts_with("alter table") {
            let table = table_after(s, "alter table");
            locks_hot |= hot(table);
            let t = table.unwrap_or("?");
            // The clauses after `alter table NAME`.
            let body = s.find(t).map_or(s.as_str(), |at| &s[at + t.len()..]);
            for clause in clauses(body).into_iter().filter(|_| large(table)) {
                let adds_check = clause.contains("add constraint")
                    && (clause.contains(" check") || clause.contains("foreign key"))
                    && !clause.contains("not valid");
                if adds_check {
                    found.push(format!("a constraint on {t} validated while it is locked"));
                }
                if clause.starts_with("add column") && clause.contains(" check") {
                    found.push(format!(
                        "a column of {t} added with a CHECK (validated under lock)"
                    ));
                }
                let rewrites = clause.contains(" type ") || clause.contains("set not null");
                if clause.starts_with("alter column") && rewrites {
                    found.push(format!("a column of {t} rewritten or scanned under lock"));
                }
                if clause.contains("primary key") && !clause.contains("using index") {
                    found.push(format!("a primary key of {t} built under lock"));
                }
            }
        }
        if s.starts_with("create trigger") {
            let table = table_after(s, " on ");
            if hot(table) {
                locks_hot = true;
                trigger_on = table.map(str::to_owned);
            }
        }
        let backfills = s.starts_with("insert into") || s.starts_with("update ");
        if let (Some(t), true) = (&trigger_on, backfills && in_transaction) {
            if s.contains(&format!(" from {t}")) {
                found.push(format!("{t} backfilled under its new trigger's lock"));
            }
        }
    }
    if !in_transaction && statements.len() != 1 {
        found.push(format!(
            "{} statements outside a transaction (an index built concurrently must be alone)",
            statements.len()
        ));
    }
    if in_transaction && locks_hot {
        match lock_timeout_ms(&sql.to_lowercase()) {
            None => found.push("a lock on a hot table without lock_timeout".into()),
            Some(ms) if ms > 1000 => found.push(format!(
                "a lock_timeout of {ms} ms (writes queued behind the migration wait that long)"
            )),
            Some(_) => {}
        }
    }
    found
}

/// The longest `lock_timeout` a migration sets, in milliseconds, outside
/// its comments: `= '1s'`, `TO '500ms'`, a bare number of milliseconds;
/// a value it cannot read counts as too long.
fn lock_timeout_ms(sql: &str) -> Option<u64> {
    let code: String = sql
        .lines()
        .map(|line| line.split("--").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    code.match_indices("lock_timeout")
        .map(|(at, name)| {
            let value = code[at + name.len()..]
                .trim_start()
                .trim_start_matches(['=', ' '])
                .trim_start_matches("to ")
                .trim_start_matches([' ', '\'']);
            let number: String = value
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let unit = value[number.len()..].trim_start();
            let scale = [
                ("ms", 1.0),
                ("min", 60_000.0),
                ("s", 1000.0),
                ("h", 3_600_000.0),
                ("d", 86_400_000.0),
            ]
            .iter()
            .find(|(u, _)| unit.starts_with(u))
            .map_or(
                if unit.starts_with('\'') || unit.starts_with(';') {
                    1.0
                } else {
                    f64::INFINITY
                },
                |(_, s)| *s,
            );
            number
                .parse::<f64>()
                .map_or(u64::MAX, |n| (n * scale).min(u64::MAX as f64) as u64)
        })
        .max()
}

#[test]
fn every_migration_holds_the_hot_tables_only_for_an_instant() {
    let mut failures = Vec::new();
    for dir in migrations() {
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        let problems = problems(&dir);
        let known = BEFORE_THE_FIRST_RELEASE.contains(&name.as_str());
        if !problems.is_empty() && !known {
            failures.push(format!("{name}: {}", problems.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_list_of_earlier_migrations_holds_only_ones_that_need_it() {
    for name in BEFORE_THE_FIRST_RELEASE {
        let dir = migrations()
            .into_iter()
            .find(|d| d.ends_with(name))
            .unwrap_or_else(|| panic!("no migration {name}"));
        assert!(
            !problems(&dir).is_empty(),
            "{name} breaks no rule: take it off the list"
        );
    }
}

#[test]
fn the_rules_catch_what_they_are_for() {
    let cases = [
        ("CREATE INDEX t_x ON tasks (x);", "without CONCURRENTLY"),
        (
            "SET LOCAL lock_timeout = '1s'; ALTER TABLE tasks ADD CONSTRAINT c CHECK (x > 0);",
            "validated while it is locked",
        ),
        (
            "SET LOCAL lock_timeout = '1s'; ALTER TABLE tasks ADD COLUMN y INT CHECK (y > 0);",
            "added with a CHECK",
        ),
        (
            "ALTER TABLE attempts ADD COLUMN y INT;",
            "without lock_timeout",
        ),
        (
            "SET LOCAL lock_timeout = '5s'; ALTER TABLE attempts ADD COLUMN y INT;",
            "lock_timeout of 5000 ms",
        ),
        (
            "-- lock_timeout = '1s' in a comment\nSET LOCAL lock_timeout TO '1.5s'; \
             ALTER TABLE attempts ADD COLUMN y INT;",
            "lock_timeout of 1500 ms",
        ),
        (
            "SET LOCAL lock_timeout = '1s'; SET LOCAL lock_timeout = '2 h'; \
             ALTER TABLE attempts ADD COLUMN y INT;",
            "lock_timeout of 7200000 ms",
        ),
        (
            "SET LOCAL lock_timeout = '1s'; CREATE TRIGGER g AFTER UPDATE ON tasks \
             FOR EACH ROW EXECUTE FUNCTION f(); INSERT INTO q SELECT id FROM tasks;",
            "backfilled",
        ),
        ("DROP INDEX tasks_x;", "without CONCURRENTLY"),
    ];
    let dir = std::env::temp_dir().join(format!("remit-lint-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    for (sql, expected) in cases {
        std::fs::write(dir.join("up.sql"), sql).unwrap();
        let found = problems(&dir).join("; ");
        assert!(found.contains(expected), "{sql}: {found}");
    }
    let fine = "SET LOCAL lock_timeout = '1s';\n\
                -- a comment; with a semicolon\n\
                ALTER TABLE tasks ADD COLUMN z INT;\n\
                ALTER TABLE tasks ADD CONSTRAINT z_positive CHECK (z > 0) NOT VALID;\n\
                CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;";
    std::fs::write(dir.join("up.sql"), fine).unwrap();
    assert_eq!(problems(&dir), Vec::<String>::new());
    std::fs::write(
        dir.join("up.sql"),
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS t_x ON tasks (x)",
    )
    .unwrap();
    std::fs::write(dir.join("metadata.toml"), "run_in_transaction = false\n").unwrap();
    assert_eq!(problems(&dir), Vec::<String>::new());
    std::fs::remove_dir_all(&dir).unwrap();
}
