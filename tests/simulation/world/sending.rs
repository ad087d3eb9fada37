//! A consumer's step with a task it holds: get it ready through store
//! faults (the runtime's own `before_request`), then send it to the fake
//! receiver, whose answers are drawn at random.

use chrono::{DateTime, Duration, Utc};
use rand::Rng;
use remit::delivery::{before_request, carry_out, Prepared, REFUSED_HAND_BACK};
use remit::policy::{Gate, TransportError};
use remit::store::{Destinations, Leases, Schedule, StoreError};

use super::delivery_step::{ours, stop_outcome, SimConsumer};
use super::{Phase, SimStore, World, FINISH_MARGIN, SEND_TIMEOUT};

impl<S: SimStore> World<S> {
    pub(super) fn random_response(
        &mut self,
        received_at: DateTime<Utc>,
    ) -> Result<(u16, Option<String>), TransportError> {
        let later = |s: i64| httpdate::fmt_http_date((received_at + Duration::seconds(s)).into());
        Ok(match self.rng.random_range(0..100) {
            0..50 => (200, None),
            50..60 => (429, Some(self.rng.random_range(0..120).to_string())),
            60..65 => (429, Some(later(self.rng.random_range(-30..120)))),
            65..70 => (503, Some(self.rng.random_range(0..60).to_string())),
            70..75 => (503, None),
            75..80 => (500, None),
            80..82 => (404, None),
            82..84 => (429, Some("garbage".into())),
            84..86 => return Err(TransportError::BlockedAddress),
            _ => return Err(TransportError::Timeout),
        })
    }

    pub(super) async fn progress(&mut self) {
        let Some((c, i)) = self.pick_in_flight() else {
            return;
        };
        match &self.consumers[c].in_flight[i].phase {
            Phase::Claimed => {
                let claimed = self.consumers[c].in_flight[i].claimed.clone();
                let id = claimed.task.id;
                let before = self.store.task(id).await.unwrap().unwrap();
                let outage = self.arm_faults(&claimed);
                // What the runtime's sender runs: the reads and the checks
                // before a request, tried again through the faults on the
                // consumer's clock, and carried out in the store when they
                // say no.
                let consumer = SimConsumer {
                    pauses: &self.consumers[c].pauses,
                    clock: &self.clock,
                    lease_expires_at: claimed.lease_expires_at,
                };
                let needed = Duration::seconds(SEND_TIMEOUT + FINISH_MARGIN);
                let prepared =
                    before_request(&self.store, &claimed, &self.policy, needed, &consumer).await;
                let fired = self.store.disarm();
                self.totals.store_faults += fired.faults;
                let payload = match prepared {
                    Ok(Prepared::Ready { payload, .. }) => payload,
                    Ok(Prepared::Stopped(stop)) => {
                        self.consumers[c].in_flight.remove(i);
                        self.check_stop(&claimed, &before, stop_outcome(&stop), fired)
                            .await;
                        return;
                    }
                    Err(StoreError::Erased { .. }) => {
                        // Erased since the claim, which did not bring the
                        // bytes along: nothing to send. The consumer hands
                        // the task back, as the runtime's sender does with
                        // a store error, and the cancel the erase left
                        // waiting settles it.
                        self.consumers[c].in_flight.remove(i);
                        check!(
                            self,
                            claimed.payload.is_none() && self.scheduled[&id].body.is_none(),
                            "the payload of {id} read as erased, though no erase of it stands"
                        );
                        self.store.hand_back(&claimed.lease(), None).await.unwrap();
                        let row = self.store.task(id).await.unwrap().unwrap();
                        check!(
                            self,
                            !ours(&row, &claimed),
                            "{id}, erased, is still held once handed back"
                        );
                        return;
                    }
                    Err(e) => {
                        self.consumers[c].in_flight.remove(i);
                        self.gave_up(&claimed, outage, &e);
                        return;
                    }
                };
                // Time passed while the step waited out the faults.
                let now = self.now();
                // Promise 2: a request goes out only under the lease that
                // holds the row, while it lasts.
                let row = self.store.task(id).await.unwrap().unwrap();
                check!(
                    self,
                    ours(&row, &claimed) && row.lease_expires_at > Some(now),
                    "promise 2: {id} sent at {now} while the row was {:?}/{:?} until {:?}",
                    row.state,
                    row.lease_token,
                    row.lease_expires_at
                );
                let response = self.random_response(now);
                if response == Err(TransportError::BlockedAddress) {
                    // The host resolved only to addresses the policy
                    // refuses: nothing reached the receiver, and the task
                    // goes back as the runtime's does, through a fault or
                    // two, which the lease (still long enough for a
                    // request) outlasts.
                    self.consumers[c].in_flight.remove(i);
                    let n = self.rng.random_range(0..=2);
                    let write_faults = self.faults(n);
                    self.store.arm(Vec::new(), write_faults);
                    let consumer = SimConsumer {
                        pauses: &self.consumers[c].pauses,
                        clock: &self.clock,
                        lease_expires_at: claimed.lease_expires_at,
                    };
                    let gate = Gate::HandBack {
                        after: Some(REFUSED_HAND_BACK),
                    };
                    let outcome = carry_out(&self.store, &claimed, &gate, &consumer).await;
                    let fired = self.store.disarm();
                    self.totals.store_faults += fired.faults;
                    check!(
                        self,
                        outcome.is_ok(),
                        "a short store fault ({n} calls) ended the hand-back of {id}: {:?}",
                        outcome
                    );
                    let outcome = outcome.unwrap();
                    self.check_stop(&claimed, &row, outcome, fired).await;
                    return;
                }
                // Promise 4, destination-wide: no request starts inside a
                // pause that was committed before it.
                let destination = self
                    .store
                    .destination(&claimed.task.destination_id)
                    .await
                    .unwrap()
                    .unwrap();
                if let Some(until) = destination.paused_until {
                    check!(
                        self,
                        until <= now,
                        "promise 4: a request to {} started at {now} inside a pause until {until}",
                        destination.id
                    );
                }
                let expected = &self.scheduled[&id];
                let (key, not_before) = (expected.key.clone(), expected.not_before);
                check!(
                    self,
                    now >= not_before,
                    "promise 1: {id} sent at {now} before {not_before}"
                );
                // An erased payload is never read for a send: only an
                // attempt whose claim brought the bytes before the erase
                // (already on its way) may still send them.
                match (&expected.body, &claimed.payload) {
                    (Some(body), None) => check!(
                        self,
                        payload.body == *body,
                        "{id} sent with a payload other than its latest"
                    ),
                    (None, None) => check!(
                        self,
                        false,
                        "{id} sent at {now}, its payload read after its erase"
                    ),
                    (None, Some(_)) => self.totals.changes.sent_after_erase += 1,
                    (Some(_), Some(_)) => {}
                }
                if let Some(deadline) = self.deadlines.get(&id) {
                    check!(
                        self,
                        now >= *deadline,
                        "promise 4: {id} sent at {now} before its Retry-After deadline {deadline}"
                    );
                }
                check!(
                    self,
                    claimed.task.idempotency_key == key,
                    "promise 3: {id} sent with another key"
                );
                self.check_line(&claimed.task);
                let sends = self.sends.entry(id).or_default();
                sends.push((now, claimed.task.idempotency_key.clone()));
                self.totals.sends += 1;
                self.consumers[c].in_flight[i].phase = Phase::Sent {
                    started_at: now,
                    response,
                };
            }
            Phase::Sent { .. } => {
                let entry = self.consumers[c].in_flight.remove(i);
                let Phase::Sent {
                    started_at,
                    response,
                } = entry.phase
                else {
                    unreachable!()
                };
                self.finish(c, entry.claimed, started_at, response).await;
            }
        }
    }
}
