//! Moving a schedule between stores: export from one, import into the
//! other, and every task continues where it was.

use chrono::Duration;
use remit::domain::{
    AttemptRecord, DestinationId, FailureReason, NewDestination, OrderingKey, Region,
};
use remit::store::{Destinations, Keys, Leases, Rates, Schedule, TransitionOutcome};
use remit_actors::transfer;

use crate::support::{self, delivered, retry_at, Backend, TestDb};

#[actix_rt::test]
async fn sqlite_to_postgres_keeps_every_task_where_it_was() {
    moves_every_task(Backend::Sqlite, Backend::Postgres).await;
}

#[actix_rt::test]
async fn postgres_to_sqlite_keeps_every_task_where_it_was() {
    moves_every_task(Backend::Postgres, Backend::Sqlite).await;
}

async fn moves_every_task(from: Backend, to: Backend) {
    let source = TestDb::on(from).await;
    let target = TestDb::on(to).await;
    // The target's clock is the source's: one moment, two stores.
    let target_store = target.store.clone().with_clock(source.clock().clone());

    let crm = DestinationId::new("crm").unwrap();
    let slow = DestinationId::new("slow").unwrap();
    for (id, secret) in [
        (&crm, Some("whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=")),
        (&slow, None),
    ] {
        source
            .store
            .add_destination(
                NewDestination::new(
                    id.clone(),
                    Region::EU,
                    "http://127.0.0.1:9/hook",
                    secret.map(str::to_owned),
                )
                .unwrap(),
            )
            .await
            .unwrap();
    }
    let mut ids = Vec::new();
    for n in 0..6 {
        let dest = if n % 2 == 0 { &crm } else { &slow };
        ids.push(source.task(&format!("r{n}"), dest, Region::EU).await);
    }
    // Bring the tasks into every state: delivered, failed, retry_wait (with
    // its attempt log), leased (a live lease), and pending.
    let claimed = source.claim(Region::EU, "old-host", 4).await;
    assert_eq!(claimed.len(), 4);
    let record = AttemptRecord {
        http_status: Some(429),
        ..AttemptRecord::default()
    };
    let s = &source.store;
    assert_eq!(
        s.finish(
            &claimed[0].lease(),
            &claimed[0].task.destination_id,
            &delivered(AttemptRecord::default())
        )
        .await
        .unwrap(),
        TransitionOutcome::Applied
    );
    s.fail(
        &claimed[1].lease(),
        &FailureReason::Status(410),
        &AttemptRecord::default(),
    )
    .await
    .unwrap();
    s.finish(
        &claimed[2].lease(),
        &claimed[2].task.destination_id,
        &retry_at(
            s.clock(),
            support::t0() + Duration::seconds(60),
            record.clone(),
        ),
    )
    .await
    .unwrap();
    let live = &claimed[3];
    s.pause_destination(&slow, Duration::minutes(5))
        .await
        .unwrap();
    s.take_tokens(&crm, 10.0, 5, 2).await.unwrap();
    // A line of two, which the move must keep in order.
    let mut line = Vec::new();
    for n in 6..8 {
        let new = remit::domain::NewTask {
            ordering_key: Some(OrderingKey::new("patient-1").unwrap()),
            ..support::db::new_task(&format!("r{n}"), &crm, Region::EU)
        };
        line.push(s.schedule(new).await.unwrap().task.id);
    }
    ids.extend(&line);

    let mut file = Vec::new();
    let exported = transfer::export(&source.store, &mut file).await.unwrap();
    assert_eq!((exported.destinations, exported.tasks), (2, 8));
    let text = String::from_utf8(file.clone()).unwrap();
    assert!(
        !text.contains("1970-01-01") && !text.contains("\"reminder\":\"r0\""),
        "payloads stay sealed"
    );
    assert!(
        !text.contains("whsec_") && !text.contains("c2VjcmV0LXNlY3JldC1zZWNyZXQ"),
        "signing secrets stay sealed"
    );

    let report = transfer::import(&target_store, &mut file.as_slice())
        .await
        .unwrap();
    assert_eq!((report.destinations.added, report.tasks.added), (2, 8));
    // The target now records the key its new payloads are sealed with, so
    // a runtime there with that key starts and one with another is refused.
    assert_eq!(
        target.count("SELECT count(*) AS n FROM payload_keys").await,
        1
    );
    target_store.check_payload_key().await.unwrap();

    for id in &ids {
        let before = s.task(*id).await.unwrap().unwrap();
        let after = target_store.task(*id).await.unwrap().unwrap();
        assert_eq!(
            after, before,
            "the row is the same, state, lease, key and ordering key included"
        );
        assert_eq!(
            target_store.attempts(*id).await.unwrap(),
            s.attempts(*id).await.unwrap(),
            "the attempt log is the same"
        );
        assert_eq!(
            target_store.payload(&after).await.unwrap(),
            s.payload(&before).await.unwrap(),
            "the payload opens with the same key"
        );
    }
    for id in [&crm, &slow] {
        assert_eq!(
            target_store.send_target(id).await.unwrap(),
            s.send_target(id).await.unwrap(),
            "the destination, its secret and its pause"
        );
    }

    // The live lease is honoured: no claim takes it while it lasts (nor
    // the task waiting out its 429).
    let now = target_store
        .claim_due(&support::claim(Region::EU, "new-host", 10))
        .await
        .unwrap();
    assert!(now
        .iter()
        .all(|c| c.task.id != live.task.id && c.task.id != claimed[2].task.id));
    // The line keeps its order: its head goes, the task behind it waits.
    let taken: Vec<_> = now.iter().map(|c| c.task.id).collect();
    assert!(taken.contains(&line[0]) && !taken.contains(&line[1]));
    // Past its expiry (and the pause) it is reclaimed with a token that
    // outranks the old one, so the old holder's late finish is fenced.
    source.clock().advance(Duration::minutes(6));
    let reclaimed = target_store
        .claim_due(&support::claim(Region::EU, "new-host", 10))
        .await
        .unwrap();
    let taken = reclaimed
        .iter()
        .find(|c| c.task.id == live.task.id)
        .expect("reclaimed");
    assert!(taken.reclaimed && taken.lease_token > live.lease_token);
    assert_eq!(
        target_store
            .finish(
                &live.lease(),
                &live.task.destination_id,
                &delivered(AttemptRecord::default())
            )
            .await
            .unwrap(),
        TransitionOutcome::Fenced
    );

    // The same import again changes nothing.
    let again = transfer::import(&target_store, &mut file.as_slice())
        .await
        .unwrap();
    assert_eq!((again.destinations.already, again.tasks.already), (2, 8));
    assert_eq!((again.destinations.added, again.tasks.added), (0, 0));
}

#[actix_rt::test]
async fn postgres_refuses_a_line_that_breaks_a_promise_and_writes_nothing() {
    refuses_crafted_lines(Backend::Postgres).await;
}

#[actix_rt::test]
async fn sqlite_refuses_a_line_that_breaks_a_promise_and_writes_nothing() {
    refuses_crafted_lines(Backend::Sqlite).await;
}

/// An export of one destination and three tasks (a delivered one with its
/// attempt log, a leased one, a pending one), as JSON values, one a line.
async fn an_export() -> Vec<serde_json::Value> {
    let source = TestDb::on(Backend::Sqlite).await;
    let crm = source.destination("crm", Region::EU).await;
    for n in 0..3 {
        source.task(&format!("r{n}"), &crm, Region::EU).await;
    }
    let claimed = source.claim(Region::EU, "old-host", 2).await;
    source
        .store
        .finish(
            &claimed[0].lease(),
            &claimed[0].task.destination_id,
            &delivered(AttemptRecord::default()),
        )
        .await
        .unwrap();
    let mut file = Vec::new();
    transfer::export(&source.store, &mut file).await.unwrap();
    let lines: Vec<serde_json::Value> = std::str::from_utf8(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "a header, a destination, three tasks");
    lines
}

fn task_in_state<'a>(lines: &'a mut [serde_json::Value], state: &str) -> &'a mut serde_json::Value {
    lines
        .iter_mut()
        .filter_map(|l| l.get_mut("task"))
        .find(|t| t["state"] == state)
        .unwrap()
}

async fn refuses_crafted_lines(backend: Backend) {
    let export = an_export().await;
    type Craft = fn(&mut [serde_json::Value]);
    let crafts: [(&str, Craft, &str); 4] = [
        (
            "an expired lease on a task whose deadline is ahead",
            |lines| {
                let at = |t: chrono::DateTime<chrono::Utc>| serde_json::json!(t.to_rfc3339());
                let t = task_in_state(lines, "leased");
                let deadline = support::t0() + Duration::days(1);
                t["not_before"] = at(deadline);
                t["available_at"] = at(deadline);
                t["retry_horizon_at"] = at(deadline + Duration::days(3));
                t["lease_expires_at"] = at(support::t0());
            },
            "lease_expires_at",
        ),
        (
            "a lease with no attempt counted",
            |lines| task_in_state(lines, "leased")["attempt_count"] = 0.into(),
            "attempt_count",
        ),
        (
            "an attempt whose fencing token would exhaust the counter",
            |lines| {
                task_in_state(lines, "delivered")["attempts"][0]["lease_token"] = i64::MAX.into()
            },
            "attempts.lease_token",
        ),
        (
            "another reminder's idempotency key",
            |lines| {
                let copied = task_in_state(lines, "delivered")["idempotency_key"].clone();
                task_in_state(lines, "pending")["idempotency_key"] = copied;
            },
            "idempotency_key",
        ),
    ];
    for (what, craft, field) in crafts {
        let target = TestDb::on(backend).await;
        let mut lines = export.clone();
        craft(&mut lines);
        let line = 1
            + (0..lines.len())
                .find(|&i| lines[i] != export[i])
                .expect("one line is crafted");
        let file: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let err = transfer::import(&target.store, &mut file.as_bytes())
            .await
            .expect_err(what);
        match &err {
            transfer::TransferError::Invalid { line: at, source } => {
                assert_eq!((*at, source.field), (line, field), "{what}");
            }
            other => panic!("{what}: {other:?}"),
        }
        let message = remit::error_chain(&err);
        assert!(
            message.starts_with(&format!("line {line}: {field}: ")),
            "{what}: {message}"
        );
        for table in ["destinations", "tasks", "payloads", "attempts"] {
            let n = target
                .count(&format!("SELECT count(*) AS n FROM {table}"))
                .await;
            assert_eq!(
                n, 0,
                "{what}: nothing is written, not even the lines before it"
            );
        }
        // The untouched export goes in whole, and a token counter already
        // past its tokens is not moved back.
        target
            .execute(match backend {
                Backend::Postgres => "SELECT setval('lease_tokens', 1000)",
                Backend::Sqlite => "UPDATE lease_tokens SET last = 1000",
            })
            .await;
        let file: String = export.iter().map(|l| format!("{l}\n")).collect();
        let report = transfer::import(&target.store, &mut file.as_bytes())
            .await
            .unwrap();
        assert_eq!(report.tasks.added, 3, "{what}");
        let pending = target.claim(Region::EU, "new-host", 10).await;
        assert_eq!(
            pending.iter().map(|c| c.lease_token).collect::<Vec<_>>(),
            [1001],
            "{what}"
        );
    }
}

/// A file written before secrets were sealed carries `signing_secret` in
/// clear: it imports, signs, and is sealed by the next key check.
#[actix_rt::test]
async fn an_old_export_with_a_secret_in_clear_imports_and_is_sealed() {
    let target = TestDb::on(Backend::Sqlite).await;
    let secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=";
    let file = format!(
        "{{\"header\":{{\"format\":\"remit-export/1\"}}}}\n\
         {{\"destination\":{{\"id\":\"crm\",\"region\":\"eu\",\"url\":\"http://127.0.0.1:9/hook\",\
         \"signing_secret\":\"{secret}\",\"enabled\":true,\"paused_until\":null,\
         \"rate_tokens\":null,\"rate_refilled_at\":null}}}}\n"
    );
    let report = transfer::import(&target.store, &mut file.as_bytes())
        .await
        .unwrap();
    assert_eq!(report.destinations.added, 1);
    let crm = DestinationId::new("crm").unwrap();
    let signing = |t: Option<remit::domain::SendTarget>| {
        t.unwrap()
            .signing_secrets
            .into_iter()
            .map(|s| s.secret)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        signing(target.store.send_target(&crm).await.unwrap()),
        [secret]
    );
    // The same file again is a repeat.
    let again = transfer::import(&target.store, &mut file.as_bytes())
        .await
        .unwrap();
    assert_eq!(again.destinations.already, 1);

    target.store.check_payload_key().await.unwrap();
    assert_eq!(
        target
            .count("SELECT count(*) AS n FROM destination_secrets WHERE secret IS NOT NULL")
            .await,
        0
    );
    assert_eq!(
        signing(target.store.send_target(&crm).await.unwrap()),
        [secret]
    );
    let mut exported = Vec::new();
    transfer::export(&target.store, &mut exported)
        .await
        .unwrap();
    assert!(!String::from_utf8(exported).unwrap().contains("whsec_"));
}

/// An ordering key in a file is held to the API's rules: a blank one stops
/// the import on its line, naming the field, before anything is written.
#[actix_rt::test]
async fn a_blank_ordering_key_in_a_file_is_refused() {
    let mut lines = an_export().await;
    task_in_state(&mut lines, "pending")["ordering_key"] = serde_json::json!(" ");
    let line = 1 + lines
        .iter()
        .position(|l| l["task"]["ordering_key"] == " ")
        .unwrap();
    let target = TestDb::on(Backend::Sqlite).await;
    let file: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let err = transfer::import(&target.store, &mut file.as_bytes())
        .await
        .expect_err("a blank key");
    let message = remit::error_chain(&err);
    assert!(
        message.starts_with(&format!("line {line}: ordering_key: ")),
        "{message}"
    );
    assert_eq!(target.count("SELECT count(*) AS n FROM tasks").await, 0);
}
