//! Two `remit run` processes sharing one destination whose receiver
//! enforces a quota: paced by what it announces, they stay within it; told
//! nothing, they run into it and are held by its 429s.

use std::time::Duration;

use remit::domain::{NewTask, Payload, Region, ReminderId, TenantId};
use remit::store::Store;

use super::{remit, terminate};
use crate::support::quota_receiver::{QuotaReceiver, Seen};
use crate::support::{self, TestDb};

const TASKS: usize = 1_000;
const QUOTA: u32 = 400;
const WINDOW: Duration = Duration::from_secs(4);

/// Delivers `TASKS` webhooks through two processes to a receiver that
/// announces its quota or not, and answers what it saw and how long the
/// deliveries took from the processes' start.
async fn deliver_through_two_processes(announce: bool) -> (Seen, Duration) {
    let db = TestDb::with_database_clock().await;
    let receiver = QuotaReceiver::start(QUOTA, WINDOW, announce);
    let crm = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let tasks: Vec<NewTask> = (0..TASKS)
        .map(|n| NewTask {
            tenant_id: TenantId::new("clinic-1").unwrap(),
            reminder_id: ReminderId::new(&format!("r{n}")).unwrap(),
            destination_id: crm.clone(),
            region: Region::EU,
            not_before: chrono::Utc::now(),
            retry_horizon: chrono::Duration::hours(1),
            payload: Payload::json(format!(r#"{{"reminder":{n}}}"#)),
            ordering_key: None,
            traceparent: None,
        })
        .collect();
    for answer in db.store.schedule_many(tasks).await.unwrap() {
        assert!(answer.unwrap().created);
    }
    // Configured far above the quota, so only what the receiver says can
    // keep the destination within it.
    let start = || {
        remit(&db)
            .args(["run", "--region", "eu"])
            .env("REMIT_THROTTLE__DEFAULT__RATE_PER_SECOND", "2000")
            .env("REMIT_THROTTLE__DEFAULT__BURST", "50")
            .env("REMIT_THROTTLE__DEFAULT__MAX_IN_FLIGHT", "16")
            .env("REMIT_CLAIM__BUSY_POLL_MS", "10")
            .spawn()
            .unwrap()
    };
    let (first, second) = (start(), start());
    let took = receiver
        .wait_for_delivered(TASKS, Duration::from_secs(60))
        .await;
    for child in [first, second] {
        assert_eq!(terminate(child).await.code(), Some(0));
    }
    (receiver.seen(), took)
}

#[actix_rt::test]
async fn two_processes_pace_a_destination_by_the_quota_its_receiver_announces() {
    let (paced, paced_took) = deliver_through_two_processes(true).await;
    let (unpaced, unpaced_took) = deliver_through_two_processes(false).await;
    eprintln!("paced: {paced:?} in {paced_took:?}; unpaced: {unpaced:?} in {unpaced_took:?}");
    assert!(
        paced.refused <= 5,
        "paced by the announced quota, at most a handful of 429s: {paced:?}"
    );
    // Told nothing, they learn the limit only by hitting it, window after
    // window (how many 429s depends on what is in flight when a window
    // fills: 8 to 31 in runs on this machine).
    assert!(
        unpaced.refused >= 4 && unpaced.refused > paced.refused + 2,
        "told nothing, the processes run into the quota: {unpaced:?} against {paced:?}"
    );
    // 1,000 at 400 per 4 s, spread over each window, take two and a half
    // windows; the processes start a little into the first.
    assert!(
        paced_took < WINDOW * 4,
        "close to the time the quota allows: {paced_took:?} ({paced:?})"
    );
    // Never slower than needed: each whole window between the first and
    // the last carried most of the quota.
    let whole = &paced.per_window[1..paced.per_window.len().saturating_sub(1)];
    assert!(
        whole.iter().all(|&n| n >= QUOTA * 7 / 10),
        "each whole window used most of the quota: {paced:?}"
    );
}
