//! What a consumer does in one step: claim, finish, release, extend a
//! lease, or crash (getting a task ready and sending it is `sending`).

use chrono::{DateTime, Duration, Utc};
use rand::Rng;
use remit::domain::{ClaimedTask, TaskState};
use remit::policy::{decide, parse_retry_after, Observed, Transition, TransportError};
use remit::store::{ClaimRequest, Leases, Schedule, TransitionOutcome};

use super::{InFlight, Phase, SimStore, World, LEASE};

impl<S: SimStore> World<S> {
    pub(super) async fn claim(&mut self) {
        let c = self.rng.random_range(0..self.consumers.len());
        let request = ClaimRequest {
            region: self.consumers[c].region,
            lease_owner: self.consumers[c].name.clone(),
            lease: Duration::seconds(LEASE),
            limit: self.rng.random_range(1..8),
            per_destination_cap: self.rng.random_range(1..4),
            // Sometimes a destination paced slower than the claim's cap.
            caps: match self.destinations.len() {
                n if n > 0 && self.rng.random_bool(0.3) => vec![(
                    self.destinations[self.rng.random_range(0..n)].0.clone(),
                    self.rng.random_range(1..3),
                )],
                _ => Vec::new(),
            },
            skip: Vec::new(),
            // Any point of the turn: where it starts changes who goes
            // first, never what may be claimed.
            resume_after: match self.destinations.len() {
                0 => None,
                n => Some(remit::store::ResumePoint {
                    destination: self.destinations[self.rng.random_range(0..n)].0.clone(),
                    tenant: remit::domain::TenantId::new("clinic").unwrap(),
                }),
            },
        };
        let now = self.now();
        let batch = self.store.claim_due(&request).await.unwrap();
        let mut taken = std::collections::HashMap::<String, u32>::new();
        for claimed in &batch {
            let d = claimed.task.destination_id.as_str();
            let n = taken.entry(d.to_owned()).or_default();
            *n += 1;
            let cap = request.cap_of(d);
            check!(self, *n <= cap, "more than {d}'s cap of {cap} claimed");
        }
        for claimed in &batch {
            self.rows.insert(claimed.task.id, claimed.task.clone());
        }
        for mut claimed in batch {
            let t = &claimed.task;
            let expected = &self.scheduled[&t.id];
            check!(
                self,
                t.region == request.region,
                "claimed another region's task"
            );
            check!(self, t.not_before <= now, "claimed before not_before");
            check!(
                self,
                !self.terminal.contains_key(&t.id),
                "claimed a terminal task"
            );
            // The operator's changes: never a task cancelled or erased
            // (unless brought back since), nor one whose change waits; and
            // never before the deadline as last moved.
            check!(
                self,
                !expected.stopped,
                "claimed {}, which the operator cancelled or erased ({:?})",
                t.id,
                t.state
            );
            check!(
                self,
                expected.waiting.is_none() && t.waiting_change.is_none(),
                "claimed {} while its change {:?} waits",
                t.id,
                expected.waiting
            );
            check!(
                self,
                t.not_before == expected.not_before && expected.not_before <= now,
                "promise 1: claimed {} due {} at {now}, its deadline is {}",
                t.id,
                t.not_before,
                expected.not_before
            );
            if let Some(payload) = &claimed.payload {
                check!(
                    self,
                    expected.body.as_ref() == Some(&payload.body),
                    "claimed {} with a payload other than its latest",
                    t.id
                );
            }
            let task = t.clone();
            self.check_line_claim(&task);
            // Now and then the claim could not bring the payload along, so
            // the delivery step reads it itself (and may meet a fault).
            if self.rng.random_range(0..10) == 0 {
                claimed.payload = None;
            }
            self.consumers[c].in_flight.push(InFlight {
                claimed,
                phase: Phase::Claimed,
            });
        }
    }

    pub(super) fn pick_in_flight(&mut self) -> Option<(usize, usize)> {
        let c = self.rng.random_range(0..self.consumers.len());
        let n = self.consumers[c].in_flight.len();
        (n > 0).then(|| (c, self.rng.random_range(0..n)))
    }

    pub(super) async fn finish(
        &mut self,
        c: usize,
        claimed: ClaimedTask,
        started_at: DateTime<Utc>,
        response: Result<(u16, Option<String>), TransportError>,
    ) {
        let now = self.now();
        let skew = self.consumers[c].skew;
        let id = claimed.task.id;
        let before = self.store.task(id).await.unwrap().unwrap();
        // The receiver's own deadline, on the world's (its) clock.
        let receivers = match &response {
            Ok((_, Some(raw))) => parse_retry_after(raw, now, Some(now))
                .map(|d| d.min(now + self.policy.max_server_delay)),
            _ => None,
        };
        // The lease's expiry was set LEASE after the store's now at the
        // claim (or the last extension), which this consumer read as that
        // instant plus its skew.
        let lease = Duration::seconds(LEASE);
        let claimed_at = claimed.lease_expires_at - lease + skew;
        let observed = Observed {
            attempt: claimed.task.attempts_since_replay(),
            retry_horizon_at: claimed.retry_horizon_seen_at(lease, claimed_at),
            // The consumer reads its own, skewed, clock; the receiver's
            // Date header is on the receiver's.
            started_at: started_at + skew,
            received_at: now + skew,
            server_date: Some(now),
            response,
        };
        let decision = decide(&observed, &self.policy, &mut self.rng);
        if let Some(pause) = decision.pause_delay() {
            let until = now + pause;
            let known = self.consumers[c]
                .pauses
                .entry(claimed.task.destination_id.clone())
                .or_insert(until);
            *known = (*known).max(until);
        }
        let attempts_before = self.store.attempts(id).await.unwrap().len();
        let outcome = self
            .store
            .finish(&claimed.lease(), &claimed.task.destination_id, &decision)
            .await
            .unwrap();
        let after = self.store.task(id).await.unwrap().unwrap();
        let ours =
            before.state == TaskState::Leased && before.lease_token == Some(claimed.lease_token);
        // Promise 2: only the current lease moves the row.
        check!(
            self,
            (outcome == TransitionOutcome::Applied) == ours,
            "promise 2: {outcome:?} for {id} while the row was {:?}/{:?}",
            before.state,
            before.lease_token
        );
        if outcome == TransitionOutcome::Applied {
            // Promise 5: the attempt is recorded with the transition.
            let attempts = self.store.attempts(id).await.unwrap().len();
            check!(
                self,
                attempts == attempts_before + 1,
                "promise 5: the finish of {id} left no attempt row"
            );
            match decision.transition {
                Transition::Deliver => {
                    check!(self, after.state == TaskState::Delivered, "not delivered")
                }
                Transition::Fail(_) => check!(self, after.state == TaskState::Failed, "not failed"),
                Transition::RetryWait { .. } => {
                    let wait = decision.retry_delay().unwrap_or_else(Duration::zero);
                    check!(
                        self,
                        after.state == TaskState::RetryWait && after.available_at >= now + wait,
                        "retry_wait not at its time"
                    );
                    // Whatever the consumer's clock said, never before the
                    // receiver's deadline on the receiver's clock.
                    if let Some(deadline) = receivers {
                        check!(
                            self,
                            after.available_at >= deadline,
                            "promise 4: {id} due at {} before the receiver's {deadline} (skew {skew})",
                            after.available_at
                        );
                        self.deadlines.insert(id, deadline);
                    }
                }
            }
        } else {
            self.totals.fenced += 1;
            check!(
                self,
                after == before,
                "promise 2: a fenced finish changed {id}"
            );
        }
    }

    pub(super) async fn hand_back(&mut self) {
        let Some((c, i)) = self.pick_in_flight() else {
            return;
        };
        if matches!(self.consumers[c].in_flight[i].phase, Phase::Claimed) {
            let entry = self.consumers[c].in_flight.remove(i);
            let before = self
                .store
                .task(entry.claimed.task.id)
                .await
                .unwrap()
                .unwrap();
            let outcome = self
                .store
                .hand_back(&entry.claimed.lease(), None)
                .await
                .unwrap();
            if outcome == TransitionOutcome::Applied {
                check!(
                    self,
                    before.lease_token == Some(entry.claimed.lease_token),
                    "a stale release applied"
                );
            }
        }
    }

    pub(super) async fn extend(&mut self) {
        let Some((c, i)) = self.pick_in_flight() else {
            return;
        };
        let lease = self.consumers[c].in_flight[i].claimed.lease();
        if self
            .store
            .extend_lease(&lease, Duration::seconds(LEASE))
            .await
            .unwrap()
            == TransitionOutcome::Applied
        {
            let now = self.now();
            self.consumers[c].in_flight[i].claimed.lease_expires_at =
                now + Duration::seconds(LEASE);
        }
    }

    /// A consumer dies: everything it held is forgotten, nothing released.
    pub(super) fn crash(&mut self) {
        let c = self.rng.random_range(0..self.consumers.len());
        let consumer = &mut self.consumers[c];
        // A request already sent whose answer dies with the consumer: the
        // receiver will see that webhook again, under the same key.
        let lost = consumer
            .in_flight
            .iter()
            .filter(|e| matches!(e.phase, Phase::Sent { .. }))
            .count();
        self.totals.duplicates += lost as u64;
        consumer.in_flight.clear();
        consumer.pauses.clear();
        consumer.incarnation += 1;
        consumer.name = format!("{}-{}#{}", consumer.region, c, consumer.incarnation);
        self.totals.crashes += 1;
    }
}
