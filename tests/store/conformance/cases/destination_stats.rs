//! Each destination's hours: a finish counts its applied attempts into
//! the hour it is recorded in, by class, with their send latency and, for
//! first attempts, their lateness; batches of one hour add up; nothing is
//! counted for an attempt that ended without an exchange; old hours are
//! pruned, region by region.

use chrono::{DateTime, Utc};
use remit::domain::{ClaimedTask, DestinationHour};
use remit::policy::{Decision, Transition};
use remit::store::{Finish, Leases, Reports, Upkeep};

use super::*;

/// An exchange that started `late_ms` after `t0()` (every test task's
/// `not_before`) and took `took_ms`: a status, or a transport error kind.
fn exchange(answer: Result<u16, &str>, late_ms: i64, took_ms: i64) -> AttemptRecord {
    let started = t0() + Duration::milliseconds(late_ms);
    AttemptRecord {
        http_status: answer.ok(),
        transport_error: answer.err().map(str::to_owned),
        retry_after_raw: (answer == Ok(429)).then(|| "30".to_owned()),
        started_at: Some(started),
        received_at: Some(started + Duration::milliseconds(took_ms)),
        ..AttemptRecord::default()
    }
}

/// A delivery for a 2xx, a retry in an hour for anything else.
fn decided(record: AttemptRecord) -> Decision {
    let transition = match record.http_status {
        Some(200..=299) => Transition::Deliver,
        _ => Transition::RetryWait {
            available_at: t0() + Duration::days(1),
        },
    };
    Decision {
        transition,
        pause_destination_until: None,
        record,
    }
}

/// Finishes `claimed` in one batch, the n-th with the n-th record.
async fn finish_all<H: Harness>(h: &H, claimed: &[ClaimedTask], records: Vec<AttemptRecord>) {
    assert_eq!(claimed.len(), records.len());
    let batch: Vec<Finish> = claimed
        .iter()
        .zip(records)
        .map(|(c, record)| Finish {
            lease: c.lease(),
            destination: c.task.destination_id.clone(),
            decision: decided(record),
        })
        .collect();
    let finished = h.store().finish_many(&batch).await.unwrap();
    assert!(finished
        .outcomes
        .iter()
        .all(|o| *o == TransitionOutcome::Applied));
}

async fn hours<H: Harness>(h: &H, d: &DestinationId) -> Vec<DestinationHour> {
    h.store()
        .destination_stats(d, t0() - Duration::days(30), t0() + Duration::days(30))
        .await
        .unwrap()
}

/// The starts of `d`'s hours from `since` to `until` after `t0()`.
async fn starts<H: Harness>(
    h: &H,
    d: &DestinationId,
    since: Duration,
    until: Duration,
) -> Vec<DateTime<Utc>> {
    h.store()
        .destination_stats(d, at(since), at(until))
        .await
        .unwrap()
        .iter()
        .map(|hour| hour.hour)
        .collect()
}

fn at(offset: Duration) -> DateTime<Utc> {
    t0() + offset
}

pub async fn finishes_count_into_their_destinations_hour_by_class<H: Harness>(h: &H) {
    let crm = destination(h, "crm", Region::US).await;
    let billing = destination(h, "billing", Region::US).await;
    for n in 0..9 {
        task(h, &format!("r{n}"), &crm, Region::US).await;
    }
    task(h, "b1", &billing, Region::US).await;
    // Recorded at 10:59:59.999: the 10 o'clock hour.
    h.clock()
        .advance(Duration::hours(2) - Duration::milliseconds(1));
    let claimed = h
        .store()
        .claim_due(&claim(Region::US, "c", 20))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 10);
    let answers: Vec<Result<u16, &str>> = vec![
        Ok(200),
        Ok(204),
        Ok(429),
        Ok(404),
        Ok(500),
        Ok(503),
        Err("timeout"),
        Err("connect"),
        Ok(302),
    ];
    let mut answers = answers.into_iter();
    let records: Vec<AttemptRecord> = claimed
        .iter()
        .map(|c| match c.task.destination_id == billing {
            true => exchange(Ok(200), 5, 5),
            false => exchange(answers.next().unwrap(), 5, 5),
        })
        .collect();
    finish_all(h, &claimed, records).await;

    let crm_hours = hours(h, &crm).await;
    assert_eq!(crm_hours.len(), 1, "one hour: {crm_hours:?}");
    let hour = &crm_hours[0];
    assert_eq!(hour.hour, at(Duration::hours(1)));
    let c = hour.counts;
    assert_eq!(
        (
            c.succeeded,
            c.rate_limited,
            c.client_error,
            c.server_error,
            c.timeout,
            c.transport,
            c.other_status
        ),
        (2, 1, 1, 2, 1, 1, 1)
    );
    assert_eq!(c.attempts(), 9);
    assert_eq!(c.failed(), 7);
    assert_eq!(hour.latency.total(), 9);
    assert_eq!(hour.lateness.total(), 9);

    let billing_hours = hours(h, &billing).await;
    assert_eq!(billing_hours.len(), 1);
    assert_eq!(billing_hours[0].counts.succeeded, 1);
    assert_eq!(billing_hours[0].counts.attempts(), 1);

    // The retries, a day later: another hour, and none of them a first
    // attempt.
    h.clock().advance(Duration::days(1));
    let retried = h
        .store()
        .claim_due(&claim(Region::US, "c", 20))
        .await
        .unwrap();
    assert_eq!(retried.len(), 7);
    let records = retried.iter().map(|_| exchange(Ok(200), 5, 5)).collect();
    finish_all(h, &retried, records).await;
    let crm_hours = hours(h, &crm).await;
    assert_eq!(crm_hours.len(), 2);
    assert_eq!(crm_hours[0], *hour, "the earlier hour is unchanged");
    assert_eq!(crm_hours[1].hour, at(Duration::hours(25)));
    assert_eq!(crm_hours[1].counts.succeeded, 7);
    assert_eq!(crm_hours[1].lateness.total(), 0, "retries have no lateness");

    // A range takes the hours that start from the hour holding `since`,
    // up to `until`.
    let ten = at(Duration::hours(1));
    assert_eq!(
        starts(h, &crm, Duration::minutes(90), Duration::hours(25)).await,
        vec![ten]
    );
    assert!(starts(h, &crm, Duration::hours(2), Duration::hours(25))
        .await
        .is_empty());
    assert!(starts(h, &crm, Duration::hours(0), Duration::hours(1))
        .await
        .is_empty());
    let unknown = DestinationId::new("nobody").unwrap();
    assert!(hours(h, &unknown).await.is_empty());
}

pub async fn percentiles_come_from_known_latencies_across_batches<H: Harness>(h: &H) {
    let crm = destination(h, "crm", Region::US).await;
    for n in 0..100 {
        task(h, &format!("r{n}"), &crm, Region::US).await;
    }
    h.clock().advance(Duration::hours(1));
    let claimed = h
        .store()
        .claim_due(&claim(Region::US, "c", 100))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 100);
    // 90 answers in 20 ms, 9 in 300 ms, one in 5 s; 99 first tries 40 ms
    // late, one 3 s late. Two batches of one hour, which add up.
    let records: Vec<AttemptRecord> = (0..100)
        .map(|n| {
            let took = match n {
                0..90 => 20,
                90..99 => 300,
                _ => 5_000,
            };
            let late = if n == 42 { 3_000 } else { 40 };
            exchange(Ok(200), late, took)
        })
        .collect();
    let (first, second) = claimed.split_at(50);
    finish_all(h, first, records[..50].to_vec()).await;
    h.clock().advance(Duration::minutes(59));
    finish_all(h, second, records[50..].to_vec()).await;

    let all = hours(h, &crm).await;
    assert_eq!(all.len(), 1);
    let hour = &all[0];
    assert_eq!(hour.counts.succeeded, 100);
    let us = Duration::microseconds;
    // 20 ms lies in 16..22.627 ms, 300 ms in 256..362.039 ms, 5 s in
    // 4.096..5.793 s; 40 ms in 32..45.255 ms, 3 s in 2.896..4.096 s.
    assert_eq!(hour.latency.quantile(0.5), Some(us(22_627)));
    assert_eq!(hour.latency.quantile(0.99), Some(us(362_039)));
    assert_eq!(hour.latency.quantile(1.0), Some(us(5_792_619)));
    assert_eq!(hour.lateness.quantile(0.99), Some(us(45_255)));
    assert_eq!(hour.lateness.quantile(1.0), Some(us(4_096_000)));
}

pub async fn attempts_without_an_exchange_count_nothing<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    task(h, "abandoned", &crm, Region::US).await;
    // Abandoned: the sender failed after the request may have gone out.
    let claimed = claim_one(h).await;
    assert_eq!(
        s.abandon(&claimed.lease(), &AttemptRecord::default())
            .await
            .unwrap(),
        TransitionOutcome::Applied
    );
    // Unsent: failed before any request.
    let claimed = claim_one(h).await;
    s.fail(
        &claimed.lease(),
        &FailureReason::MaxAttempts,
        &AttemptRecord::default(),
    )
    .await
    .unwrap();
    assert!(hours(h, &crm).await.is_empty());

    // A stale lease's late report is fenced, and counts nothing either.
    task(h, "fenced", &crm, Region::US).await;
    let claimed = claim_one(h).await;
    let mut stale = claimed.lease();
    stale.token -= 1_000;
    let finish = Finish {
        lease: stale,
        destination: crm.clone(),
        decision: decided(exchange(Ok(200), 5, 5)),
    };
    let finished = s.finish_many(&[finish]).await.unwrap();
    assert_eq!(finished.outcomes, vec![TransitionOutcome::Fenced]);
    assert!(hours(h, &crm).await.is_empty());
}

pub async fn old_hours_are_pruned_region_by_region<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    let eu = destination(h, "eu-crm", Region::EU).await;
    for (reminder, d, region) in [("u1", &crm, Region::US), ("e1", &eu, Region::EU)] {
        task(h, reminder, d, region).await;
    }
    task(h, "u2", &crm, Region::US).await;
    // The 10 o'clock hour on both, and a day later on crm.
    h.clock().advance(Duration::hours(1));
    for region in [Region::US, Region::EU] {
        let claimed = s.claim_due(&claim(region, "c", 1)).await.unwrap();
        finish_all(h, &claimed, vec![exchange(Ok(200), 5, 5)]).await;
    }
    h.clock().advance(Duration::days(1));
    let claimed = s.claim_due(&claim(Region::US, "c", 1)).await.unwrap();
    finish_all(h, &claimed, vec![exchange(Ok(200), 5, 5)]).await;
    assert_eq!(hours(h, &crm).await.len(), 2);

    // Seven days after the 10 o'clock hour ended, it is still kept.
    h.clock().set(at(Duration::hours(2) + Duration::days(7)));
    assert_eq!(
        s.prune_destination_stats(None, Duration::days(7))
            .await
            .unwrap(),
        0
    );
    h.clock().advance(Duration::seconds(1));
    assert_eq!(
        s.prune_destination_stats(Some(Region::EU), Duration::days(7))
            .await
            .unwrap(),
        1
    );
    assert!(hours(h, &eu).await.is_empty());
    assert_eq!(hours(h, &crm).await.len(), 2, "another region's are kept");
    assert_eq!(
        s.prune_destination_stats(Some(Region::US), Duration::days(7))
            .await
            .unwrap(),
        1
    );
    let left = hours(h, &crm).await;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].hour, at(Duration::hours(25)));
}
