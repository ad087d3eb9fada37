//! The simulated world: one store, a clock, consumers and a receiver log.

use std::collections::HashMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use remit::domain::{
    ClaimedTask, DestinationId, NewDestination, NewTask, Payload, Region, ReminderId, Task, TaskId,
    TaskState, TenantId,
};
use remit::payload_crypto::PayloadKey;
use remit::policy::{decide, Observed, RetryPolicy, Transition, TransportError};
use remit::store::{ClaimRequest, Clock, MemStore, Store, TransitionOutcome};

const LEASE: i64 = 30;
const SEND_TIMEOUT: i64 = 10;

/// Fails the run, naming the seed that reproduces it.
macro_rules! check {
    ($world:expr, $cond:expr, $($msg:tt)+) => {
        if !$cond {
            panic!("seed={} step={}: {}", $world.seed, $world.step, format!($($msg)+));
        }
    };
}

mod invariants;

#[derive(Debug, Default)]
pub struct Totals {
    pub steps: u64,
    pub tasks: u64,
    pub sends: u64,
    pub crashes: u64,
    pub fenced: u64,
    pub duplicates: u64,
}

impl Totals {
    pub fn add(&mut self, other: &Totals) {
        self.steps += other.steps;
        self.tasks += other.tasks;
        self.sends += other.sends;
        self.crashes += other.crashes;
        self.fenced += other.fenced;
        self.duplicates += other.duplicates;
    }
}

enum Phase {
    Claimed,
    /// The request reached the receiver; the response is on its way.
    Sent {
        started_at: DateTime<Utc>,
        response: Result<(u16, Option<String>), TransportError>,
    },
}

struct InFlight {
    claimed: ClaimedTask,
    phase: Phase,
}

struct Consumer {
    region: Region,
    name: String,
    incarnation: u32,
    in_flight: Vec<InFlight>,
}

pub struct World {
    seed: u64,
    step: u64,
    rng: StdRng,
    clock: Clock,
    store: MemStore,
    policy: RetryPolicy,
    consumers: Vec<Consumer>,
    destinations: Vec<(DestinationId, Region)>,
    /// Every task scheduled: its key and deadline, as the product asked.
    scheduled: HashMap<TaskId, (String, DateTime<Utc>)>,
    /// The receiver's log: when each task's requests arrived, with the key.
    sends: HashMap<TaskId, Vec<(DateTime<Utc>, String)>>,
    /// The latest committed Retry-After deadline per task.
    deadlines: HashMap<TaskId, DateTime<Utc>>,
    /// Rows as they were when they became terminal.
    terminal: HashMap<TaskId, Task>,
    totals: Totals,
}

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 0).unwrap()
}

impl World {
    pub fn new(seed: u64) -> Self {
        let clock = Clock::pinned(start());
        let consumers = [Region::Us, Region::Us, Region::Eu, Region::Eu]
            .into_iter()
            .enumerate()
            .map(|(i, region)| Consumer {
                region,
                name: format!("{region}-{i}"),
                incarnation: 0,
                in_flight: Vec::new(),
            })
            .collect();
        Self {
            seed,
            step: 0,
            rng: StdRng::seed_from_u64(seed),
            store: MemStore::new(PayloadKey::from_bytes([3; 32]), clock.clone()),
            clock,
            policy: RetryPolicy {
                backoff_base: Duration::seconds(1),
                backoff_cap: Duration::seconds(60),
                max_attempts: 12,
                max_server_delay: Duration::minutes(10),
                horizon: Duration::hours(1),
                ..RetryPolicy::default()
            },
            consumers,
            destinations: Vec::new(),
            scheduled: HashMap::new(),
            sends: HashMap::new(),
            deadlines: HashMap::new(),
            terminal: HashMap::new(),
            totals: Totals::default(),
        }
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now_param().unwrap()
    }

    pub async fn run(mut self, steps: u64) -> Totals {
        for (i, region) in [Region::Us, Region::Us, Region::Eu, Region::Eu]
            .into_iter()
            .enumerate()
        {
            let id = DestinationId::new(&format!("dest-{i}")).unwrap();
            let new = NewDestination::new(id.clone(), region, "http://127.0.0.1:9/", None).unwrap();
            self.store.add_destination(new).await.unwrap();
            self.destinations.push((id, region));
        }
        for _ in 0..steps {
            self.step += 1;
            self.random_step(true).await;
            self.check_invariants().await;
        }
        // Drain: no more crashes or new work; everything must end.
        let mut drained = 0;
        while !self.all_terminal() {
            drained += 1;
            check!(self, drained < 200_000, "the schedule never drained");
            self.step += 1;
            self.random_step(false).await;
            self.check_invariants().await;
        }
        self.check_final().await;
        self.totals.steps = self.step;
        self.totals.tasks = self.scheduled.len() as u64;
        self.totals
    }

    fn all_terminal(&self) -> bool {
        self.terminal.len() == self.scheduled.len()
    }

    async fn random_step(&mut self, chaos: bool) {
        match self.rng.random_range(0..100) {
            0..12 => {
                let ms = self.rng.random_range(0..4_000);
                self.clock.advance(Duration::milliseconds(ms));
            }
            12..18 if chaos && self.scheduled.len() < 60 => self.schedule().await,
            18..38 => self.claim().await,
            38..75 => self.progress().await,
            75..82 => self.release().await,
            82..85 => self.extend().await,
            85..88 if chaos => self.crash(),
            _ => self.clock.advance(Duration::milliseconds(200)),
        }
    }

    async fn schedule(&mut self) {
        let (destination, region) =
            self.destinations[self.rng.random_range(0..self.destinations.len())].clone();
        let offset = self.rng.random_range(-5_000..30_000);
        let n = self.scheduled.len();
        let new = NewTask {
            tenant_id: TenantId::new("clinic").unwrap(),
            reminder_id: ReminderId::new(&format!("r{n}")).unwrap(),
            destination_id: destination,
            region,
            not_before: self.now() + Duration::milliseconds(offset),
            retry_horizon: self.policy.horizon,
            payload: Payload::json(format!("{{\"n\":{n}}}")),
        };
        let repeat = new.clone();
        let task = self.store.schedule(new).await.unwrap().task;
        // Promise 4's other half: a repeat never makes a second webhook.
        let again = self.store.schedule(repeat).await.unwrap();
        check!(
            self,
            !again.created && again.task.id == task.id,
            "a repeat created a second task"
        );
        self.scheduled
            .insert(task.id, (task.idempotency_key, task.not_before));
    }

    async fn claim(&mut self) {
        let c = self.rng.random_range(0..self.consumers.len());
        let request = ClaimRequest {
            region: self.consumers[c].region,
            consumer: self.consumers[c].name.clone(),
            lease: Duration::seconds(LEASE),
            limit: self.rng.random_range(1..8),
            per_destination_cap: self.rng.random_range(1..4),
        };
        let now = self.now();
        for claimed in self.store.claim_due(&request).await.unwrap() {
            let t = &claimed.task;
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
            self.consumers[c].in_flight.push(InFlight {
                claimed,
                phase: Phase::Claimed,
            });
        }
    }

    fn pick_in_flight(&mut self) -> Option<(usize, usize)> {
        let c = self.rng.random_range(0..self.consumers.len());
        let n = self.consumers[c].in_flight.len();
        (n > 0).then(|| (c, self.rng.random_range(0..n)))
    }

    fn random_response(
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
            _ => return Err(TransportError::Timeout),
        })
    }

    async fn progress(&mut self) {
        let Some((c, i)) = self.pick_in_flight() else {
            return;
        };
        let now = self.now();
        match &self.consumers[c].in_flight[i].phase {
            Phase::Claimed => {
                let claimed = self.consumers[c].in_flight[i].claimed.clone();
                // As the sender does: never start a request the lease may
                // not outlive.
                if now >= claimed.lease_expires_at - Duration::seconds(SEND_TIMEOUT) {
                    self.consumers[c].in_flight.remove(i);
                    let _ = self.store.release(&claimed.lease(), None).await.unwrap();
                    return;
                }
                let id = claimed.task.id;
                let (key, not_before) = self.scheduled[&id].clone();
                check!(
                    self,
                    now >= not_before,
                    "promise 1: {id} sent at {now} before {not_before}"
                );
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
                let sends = self.sends.entry(id).or_default();
                sends.push((now, claimed.task.idempotency_key.clone()));
                self.totals.sends += 1;
                let response = self.random_response(now);
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
                self.finish(entry.claimed, started_at, response).await;
            }
        }
    }

    async fn finish(
        &mut self,
        claimed: ClaimedTask,
        started_at: DateTime<Utc>,
        response: Result<(u16, Option<String>), TransportError>,
    ) {
        let now = self.now();
        let id = claimed.task.id;
        let before = self.store.task(id).await.unwrap().unwrap();
        let observed = Observed {
            attempt: u32::try_from(claimed.task.attempt_count).unwrap(),
            retry_horizon_at: claimed.task.retry_horizon_at,
            started_at,
            received_at: now,
            response,
        };
        let decision = decide(&observed, &self.policy, &mut self.rng);
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
                Transition::RetryWait { available_at } => {
                    check!(
                        self,
                        after.state == TaskState::RetryWait && after.available_at >= available_at,
                        "retry_wait not at its time"
                    );
                    if decision.record.retry_after_deadline.is_some() {
                        self.deadlines.insert(id, available_at);
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

    async fn release(&mut self) {
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
                .release(&entry.claimed.lease(), None)
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

    async fn extend(&mut self) {
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
    fn crash(&mut self) {
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
        consumer.incarnation += 1;
        consumer.name = format!("{}-{}#{}", consumer.region, c, consumer.incarnation);
        self.totals.crashes += 1;
    }
}
