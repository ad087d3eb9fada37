//! The simulated world: one store, a clock, consumers and a receiver log.

use remit::store::{
    Changes, Clock, Database, Destinations, MemStore, Reports, Schedule, Store, Transfer,
};
use std::collections::HashMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use remit::domain::{
    ClaimedTask, DestinationId, NewDestination, NewTask, OrderingKey, Payload, Region, ReminderId,
    Task, TaskId, TenantId, WaitingChange,
};
use remit::payload_crypto::PayloadKey;
use remit::policy::{RetryPolicy, TransportError};

const LEASE: i64 = 30;
const SEND_TIMEOUT: i64 = 10;
/// What the finish needs of the lease after a request, as the runtime's.
const FINISH_MARGIN: i64 = LEASE / 4;

/// Fails the run, naming the seed that reproduces it.
macro_rules! check {
    ($world:expr, $cond:expr, $($msg:tt)+) => {
        if !$cond {
            panic!("seed={} step={}: {}", $world.seed, $world.step, format!($($msg)+));
        }
    };
}

mod actions;
mod changes;
mod delivery_step;
mod faults;
mod invariants;
mod sending;

#[derive(Debug, Default)]
pub struct Totals {
    pub steps: u64,
    pub tasks: u64,
    pub sends: u64,
    pub crashes: u64,
    pub fenced: u64,
    pub duplicates: u64,
    /// Store faults a delivery step met before its request.
    pub store_faults: u64,
    /// Delivery steps that gave up on a store fault the lease could not
    /// outlast.
    pub gave_up: u64,
    /// An operator's changes, by what they did.
    pub changes: ChangeCounts,
}

/// What the operator's changes did over a run.
#[derive(Debug, Default, Clone, Copy)]
pub struct ChangeCounts {
    /// Cancels that ended the task at once, and those that waited for the
    /// attempt in flight.
    pub cancelled: u64,
    pub cancelled_after_attempt: u64,
    /// Reschedules that moved the task at once (of which, ended tasks
    /// brought back), that waited for the attempt, and that were refused.
    pub moved: u64,
    pub revived: u64,
    pub moved_after_attempt: u64,
    pub refused: u64,
    pub erased: u64,
    /// Sends of a payload erased while its attempt was in flight (the
    /// sender held the bytes already).
    pub sent_after_erase: u64,
    /// Tasks that retry_now made due now.
    pub retried_now: u64,
    /// Waiting changes settled, and of those the lost attempts logged.
    pub settled: u64,
    pub abandoned: u64,
}

impl Totals {
    pub fn add(&mut self, other: &Totals) {
        self.steps += other.steps;
        self.tasks += other.tasks;
        self.sends += other.sends;
        self.crashes += other.crashes;
        self.fenced += other.fenced;
        self.duplicates += other.duplicates;
        self.store_faults += other.store_faults;
        self.gave_up += other.gave_up;
        let (c, o) = (&mut self.changes, &other.changes);
        c.cancelled += o.cancelled;
        c.cancelled_after_attempt += o.cancelled_after_attempt;
        c.moved += o.moved;
        c.revived += o.revived;
        c.moved_after_attempt += o.moved_after_attempt;
        c.refused += o.refused;
        c.erased += o.erased;
        c.sent_after_erase += o.sent_after_erase;
        c.retried_now += o.retried_now;
        c.settled += o.settled;
        c.abandoned += o.abandoned;
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

/// What the world expects of a task: as the product scheduled it, then as
/// the operator changed it.
struct Expected {
    key: String,
    /// The deadline it is due from: as scheduled, or as last moved (a move
    /// that waits for an attempt counts once it has settled).
    not_before: DateTime<Utc>,
    /// The payload's body as last written; `None` once erased.
    body: Option<Vec<u8>>,
    /// The change the operator asked while an attempt was in flight, until
    /// it settles.
    waiting: Option<WaitingChange>,
    /// Cancelled or erased (whatever the cancel answered): no attempt may
    /// be claimed until a reschedule brings it back.
    stopped: bool,
    /// The step at which the operator last moved it (or brought it back),
    /// which changes its place in its line.
    moved_at: u64,
}

/// A keyed task's latest claim: when, and how many attempts every other
/// task of its line had then.
struct LineClaim {
    step: u64,
    attempts: HashMap<TaskId, i32>,
}

struct Consumer {
    region: Region,
    name: String,
    incarnation: u32,
    in_flight: Vec<InFlight>,
    /// How far this consumer's wall clock is off the store's.
    skew: Duration,
    /// The pauses it knows of (from 429s it got itself), in the world's
    /// time, as the runtime keeps them on its monotonic clock.
    pauses: HashMap<DestinationId, DateTime<Utc>>,
}

pub struct World<S = MemStore> {
    seed: u64,
    step: u64,
    rng: StdRng,
    clock: Clock,
    /// The store, with the faults a delivery step may meet.
    store: faults::Faulty<S>,
    policy: RetryPolicy,
    consumers: Vec<Consumer>,
    destinations: Vec<(DestinationId, Region)>,
    /// Every task scheduled, with what is expected of it.
    scheduled: HashMap<TaskId, Expected>,
    /// Every row as the checks after the last step read it: as they stand
    /// when a step begins (a claim updates the rows it took).
    rows: HashMap<TaskId, Task>,
    /// Their ids in the order they were scheduled, to pick from.
    order: Vec<TaskId>,
    /// The receiver's log: when each task's requests arrived, with the key.
    sends: HashMap<TaskId, Vec<(DateTime<Utc>, String)>>,
    /// The latest committed Retry-After deadline per task.
    deadlines: HashMap<TaskId, DateTime<Utc>>,
    /// Rows as they were when they became terminal (with no change
    /// waiting), until a reschedule brings one back.
    terminal: HashMap<TaskId, Task>,
    /// The tasks scheduled with an ordering key, with their destination
    /// and key, for the check that a line goes in order.
    lines: Vec<(TaskId, DestinationId, OrderingKey)>,
    /// Per keyed task, its latest claim.
    line_claims: HashMap<TaskId, LineClaim>,
    totals: Totals,
}

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 0).unwrap()
}

/// A store the simulation can run on: any `Store` (with the operator's
/// `Changes`, and the destinations' hours its finishes keep) that can also
/// list every task, for the invariant checks.
pub trait SimStore: Store + Changes + Reports + Sync {
    fn all_tasks(&self) -> impl std::future::Future<Output = Vec<Task>>;
}

impl SimStore for MemStore {
    async fn all_tasks(&self) -> Vec<Task> {
        MemStore::all_tasks(self)
    }
}

impl SimStore for Database {
    /// Read through the export's pages, as an operator's export would.
    async fn all_tasks(&self) -> Vec<Task> {
        let mut all = Vec::new();
        let mut after = None;
        loop {
            let page = self.export_tasks(after, 1_000).await.unwrap();
            let Some(last) = page.last() else {
                return all;
            };
            after = Some(last.task.id);
            all.extend(page.into_iter().map(|r| r.task));
        }
    }
}

/// The key every simulated store seals payloads with.
pub fn key() -> PayloadKey {
    PayloadKey::from_bytes([3; 32])
}

/// The simulation's clock, pinned at its start.
pub fn clock() -> Clock {
    Clock::pinned(start())
}

impl World<MemStore> {
    /// A world over the in-memory model.
    pub fn new(seed: u64) -> Self {
        let clock = clock();
        Self::on(seed, MemStore::new(key(), clock.clone()), clock)
    }
}

impl<S: SimStore> World<S> {
    /// A world over `store`, whose clock must be `clock`.
    pub fn on(seed: u64, store: S, clock: Clock) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let consumers = [Region::US, Region::US, Region::EU, Region::EU]
            .into_iter()
            .enumerate()
            .map(|(i, region)| Consumer {
                region,
                name: format!("{region}-{i}"),
                incarnation: 0,
                in_flight: Vec::new(),
                // Clocks off by up to ten seconds either way.
                skew: Duration::milliseconds(rng.random_range(-10_000..=10_000)),
                pauses: HashMap::new(),
            })
            .collect();
        Self {
            seed,
            step: 0,
            rng,
            store: faults::Faulty::new(store),
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
            rows: HashMap::new(),
            order: Vec::new(),
            sends: HashMap::new(),
            deadlines: HashMap::new(),
            terminal: HashMap::new(),
            lines: Vec::new(),
            line_claims: HashMap::new(),
            totals: Totals::default(),
        }
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now_param().unwrap()
    }

    pub async fn run(mut self, steps: u64) -> Totals {
        for (i, region) in [Region::US, Region::US, Region::EU, Region::EU]
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
            75..82 => self.hand_back().await,
            82..85 => self.extend().await,
            85..88 if chaos => self.crash(),
            // The operator's changes; settling them is each process's
            // periodic step, and goes on while the schedule drains.
            88 if chaos => match self.rng.random_range(0..3) {
                0 => self.erase().await,
                _ => self.cancel().await,
            },
            89..91 if chaos => self.reschedule().await,
            91 => self.retry_now().await,
            92..94 => self.settle_changes().await,
            _ => self.clock.advance(Duration::milliseconds(200)),
        }
    }

    async fn schedule(&mut self) {
        let (destination, region) =
            self.destinations[self.rng.random_range(0..self.destinations.len())].clone();
        let offset = self.rng.random_range(-5_000..30_000);
        let n = self.scheduled.len();
        let body = format!("{{\"n\":{n}}}").into_bytes();
        // Half the tasks wait in one of a few lines per destination.
        let ordering_key = match self.rng.random_range(0..6) {
            line @ 0..3 => Some(OrderingKey::new(&format!("line-{line}")).unwrap()),
            _ => None,
        };
        let new = NewTask {
            traceparent: None,
            tenant_id: TenantId::new("clinic").unwrap(),
            reminder_id: ReminderId::new(&format!("r{n}")).unwrap(),
            destination_id: destination,
            region,
            not_before: self.now() + Duration::milliseconds(offset),
            retry_horizon: self.policy.horizon,
            payload: Payload::json(body.clone()),
            ordering_key,
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
        if let Some(key) = task.ordering_key.clone() {
            self.lines.push((task.id, task.destination_id.clone(), key));
        }
        self.order.push(task.id);
        let expected = Expected {
            key: task.idempotency_key,
            not_before: task.not_before,
            body: Some(body),
            waiting: None,
            stopped: false,
            moved_at: 0,
        };
        self.scheduled.insert(task.id, expected);
    }
}
