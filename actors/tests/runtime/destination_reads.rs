//! The batched destination read the senders use answers as the one-row
//! read does, in the order asked, on every store the runtime runs on.

use remit::domain::{DestinationId, Region};
use remit::store::Destinations;

use crate::support::{Backend, TestDb};

async fn reads_many_as_it_reads_one(backend: Backend) {
    let db = TestDb::on(backend).await;
    let crm = db.destination("crm", Region::EU).await;
    let erp = db.destination("erp", Region::EU).await;
    db.store
        .pause_destination(&erp, chrono::Duration::minutes(5))
        .await
        .unwrap();
    let gone = DestinationId::new("gone").unwrap();
    let asked = [erp.clone(), gone.clone(), crm.clone(), erp.clone()];

    let many = db.store.send_targets(&asked).await.unwrap();
    let mut one = Vec::new();
    for id in &asked {
        one.push(db.store.send_target(id).await.unwrap());
    }

    assert_eq!(
        many.len(),
        asked.len(),
        "an answer per id, repeats included"
    );
    for ((id, many), one) in asked.iter().zip(&many).zip(&one) {
        match (many, one) {
            (Some(many), Some(one)) => {
                assert_eq!(&many.destination.id, id);
                assert_eq!(many.destination, one.destination);
                assert_eq!(many.signing_secrets, one.signing_secrets);
                assert_eq!(many.pause_left.is_some(), one.pause_left.is_some());
            }
            (None, None) => assert_eq!(id, &gone),
            other => panic!("{id}: {other:?}"),
        }
    }
    assert!(
        many[0].as_ref().unwrap().pause_left.is_some(),
        "erp is paused"
    );
    assert!(many[2].as_ref().unwrap().pause_left.is_none(), "crm is not");
    assert!(db.store.send_targets(&[]).await.unwrap().is_empty());
}

#[actix_rt::test]
async fn postgres_reads_many_destinations_as_it_reads_one() {
    reads_many_as_it_reads_one(Backend::Postgres).await;
}

#[actix_rt::test]
async fn sqlite_reads_many_destinations_as_it_reads_one() {
    reads_many_as_it_reads_one(Backend::Sqlite).await;
}
