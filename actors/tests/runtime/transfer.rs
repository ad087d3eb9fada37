//! Moving a schedule between stores: export from one, import into the
//! other, and every task continues where it was.

use chrono::Duration;
use remit::domain::{AttemptRecord, DestinationId, FailureReason, NewDestination, Region};
use remit::store::{Store, TransitionOutcome};
use remit_actors::transfer;

use crate::support::{self, Backend, TestDb};

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
        s.mark_delivered(&claimed[0].lease(), &AttemptRecord::default())
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
    s.move_to_retry_wait(
        &claimed[2].lease(),
        support::t0() + Duration::seconds(60),
        &record,
    )
    .await
    .unwrap();
    let live = &claimed[3];
    s.pause_destination(&slow, Duration::minutes(5))
        .await
        .unwrap();
    s.take_tokens(&crm, 10.0, 5, 2).await.unwrap();

    let mut file = Vec::new();
    let exported = transfer::export(&source.store, &mut file).await.unwrap();
    assert_eq!((exported.destinations, exported.tasks), (2, 6));
    let text = String::from_utf8(file.clone()).unwrap();
    assert!(
        !text.contains("1970-01-01") && !text.contains("\"reminder\":\"r0\""),
        "payloads stay sealed"
    );

    let report = transfer::import(&target_store, &mut file.as_slice())
        .await
        .unwrap();
    assert_eq!((report.destinations.added, report.tasks.added), (2, 6));

    for id in &ids {
        let before = s.task(*id).await.unwrap().unwrap();
        let after = target_store.task(*id).await.unwrap().unwrap();
        assert_eq!(
            after, before,
            "the row is the same, state, lease and key included"
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
            .mark_delivered(&live.lease(), &AttemptRecord::default())
            .await
            .unwrap(),
        TransitionOutcome::Fenced
    );

    // The same import again changes nothing.
    let again = transfer::import(&target_store, &mut file.as_slice())
        .await
        .unwrap();
    assert_eq!((again.destinations.already, again.tasks.already), (2, 6));
    assert_eq!((again.destinations.added, again.tasks.added), (0, 0));
}
