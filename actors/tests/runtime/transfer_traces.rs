//! What an export leaves behind on purpose: a task's traceparent.

use remit::domain::{DestinationId, NewDestination, Region};
use remit::store::{Destinations, Schedule};
use remit_actors::transfer;

use crate::support::{self, Backend, TestDb};

/// A trace is of no use in another deployment, so an export leaves the
/// traceparent behind and the imported task's attempts start their own.
#[actix_rt::test]
async fn an_exported_task_leaves_its_traceparent_behind() {
    let source = TestDb::on(Backend::Sqlite).await;
    let target = TestDb::on(Backend::Postgres).await;
    let crm = DestinationId::new("crm").unwrap();
    source
        .store
        .add_destination(
            NewDestination::new(crm.clone(), Region::EU, "http://127.0.0.1:9/hook", None).unwrap(),
        )
        .await
        .unwrap();
    let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let mut traced = support::db::new_task("r1", &crm, Region::EU);
    traced.traceparent = Some(remit::domain::TraceParent::parse(parent).unwrap());
    let id = source.store.schedule(traced).await.unwrap().task.id;

    let mut file = Vec::new();
    transfer::export(&source.store, &mut file).await.unwrap();
    assert!(!String::from_utf8(file.clone())
        .unwrap()
        .contains(&parent[3..35]));
    transfer::import(&target.store, &mut file.as_slice())
        .await
        .unwrap();
    let before = source.store.task(id).await.unwrap().unwrap();
    let after = target.store.task(id).await.unwrap().unwrap();
    assert_eq!(after.traceparent, None);
    assert_eq!(
        after,
        remit::domain::Task {
            traceparent: None,
            ..before
        }
    );
}
