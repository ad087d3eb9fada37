//! Regions sharing one database and one events receiver each deliver their
//! own operational events, through an events destination of their own; a
//! database holding the events destination of before (one id for every
//! region) still delivers the events queued for it.

use remit::store::{Destinations, Schedule};
use std::time::Duration;

use remit::domain::{
    DestinationId, DisableOverrides, NewDestination, NewTask, Payload, Region, ReminderId, TenantId,
};
use remit_actors::runtime::{events_destination_id, EVENTS_TENANT};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::support::{self, Backend, Received, Receiver, TestDb};

#[actix_rt::test]
async fn two_regions_sharing_an_events_receiver_both_deliver_their_events() {
    both_regions_deliver(Backend::Postgres, false).await;
}

#[actix_rt::test]
async fn two_regions_sharing_an_events_receiver_both_deliver_their_events_on_sqlite() {
    both_regions_deliver(Backend::Sqlite, false).await;
}

#[actix_rt::test]
async fn events_queued_for_the_events_destination_of_before_regions_still_go_out() {
    both_regions_deliver(Backend::Postgres, true).await;
}

#[actix_rt::test]
async fn events_queued_for_the_events_destination_of_before_regions_still_go_out_on_sqlite() {
    both_regions_deliver(Backend::Sqlite, true).await;
}

/// The id every region's events destination had before the region was
/// part of it.
fn id_of_before(url: &str, secret: &str) -> DestinationId {
    let mut hash = Sha256::new();
    hash.update(url.as_bytes());
    hash.update([0]);
    hash.update(secret.as_bytes());
    let short = remit::payload_crypto::hex(&hash.finalize()[..6]);
    DestinationId::new(&format!("remit-events-{short}")).unwrap()
}

/// The disabled event of `destination` the receiver answered 2xx.
fn delivered(requests: &[Received], destination: &str) -> Option<Value> {
    requests
        .iter()
        .filter(|r| r.status == 200)
        .filter_map(|r| serde_json::from_slice::<Value>(&r.body).ok())
        .find(|b| b["type"] == "destination.disabled" && b["data"]["destination_id"] == destination)
}

/// A US and an EU runtime on one database, with the same `events.url` and
/// secret; a destination of each region is disabled. With `legacy`, the
/// US region's events destination of before is registered first (as the
/// previous release left it), with an event's webhook still queued for it.
async fn both_regions_deliver(backend: Backend, legacy: bool) {
    let db = TestDb::running_on(backend).await;
    let events = Receiver::start();
    let url = events.url("/events");
    let secret = remit_actors::signature::generate_secret();

    let old = id_of_before(&url, &secret);
    if legacy {
        let never = DisableOverrides::new(None, Some(i32::MAX as u32)).unwrap();
        let new = NewDestination::new(old.clone(), Region::US, &url, Some(secret.clone()))
            .unwrap()
            .with_overrides(never);
        db.store.add_destination(new).await.unwrap();
        let body = json!({
            "type": "destination.disabled",
            "timestamp": chrono::Utc::now(),
            "data": {"destination_id": "queued-before", "region": "us"},
        });
        db.store
            .schedule(NewTask {
                traceparent: None,
                tenant_id: TenantId::new(EVENTS_TENANT).unwrap(),
                reminder_id: ReminderId::new(&format!(
                    "destination.disabled-{}",
                    uuid::Uuid::new_v4()
                ))
                .unwrap(),
                destination_id: old.clone(),
                region: Region::US,
                not_before: chrono::Utc::now(),
                retry_horizon: chrono::Duration::hours(1),
                payload: Payload::json(body.to_string()),
                ordering_key: None,
            })
            .await
            .unwrap();
    }

    let receiver = Receiver::start();
    let us = support::destination(&db, "us-crm", Region::US, &receiver.url("/us"), None).await;
    let eu = support::destination(&db, "eu-crm", Region::EU, &receiver.url("/eu"), None).await;
    db.store.disable_destination(&us, None).await.unwrap();
    db.store.disable_destination(&eu, None).await.unwrap();

    let configured = |region: Region, owner: &str| {
        let mut config = support::config(&db, region, owner);
        config.events.url = Some(url.clone());
        config.events.secret = Some(secret.clone());
        config.events.poll_ms = 50;
        config
    };
    let us_runtime = support::start(configured(Region::US, "us-1"), &db.store).await;
    let eu_runtime = support::start(configured(Region::EU, "eu-1"), &db.store).await;
    events
        .wait_until(Duration::from_secs(20), "both regions' events", |r| {
            delivered(r, "us-crm").is_some()
                && delivered(r, "eu-crm").is_some()
                && (!legacy || delivered(r, "queued-before").is_some())
        })
        .await;
    us_runtime.shutdown().await;
    eu_runtime.shutdown().await;

    let requests = events.requests();
    assert_eq!(
        delivered(&requests, "us-crm").unwrap()["data"]["region"],
        "us"
    );
    assert_eq!(
        delivered(&requests, "eu-crm").unwrap()["data"]["region"],
        "eu"
    );
    // Each region's events destination is its own, in its region.
    for region in [Region::US, Region::EU] {
        let id = events_destination_id(region, &url, Some(&secret)).unwrap();
        let d = db.store.destination(&id).await.unwrap().unwrap();
        assert_eq!(d.region, region);
        assert!(d.enabled);
    }
    // The one of before is left as it was.
    let before = db.store.destination(&old).await.unwrap();
    if legacy {
        let before = before.unwrap();
        assert_eq!(before.region, Region::US);
        assert!(before.enabled);
    } else {
        assert!(before.is_none());
    }
}
