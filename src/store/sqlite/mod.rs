//! `SqliteStore`: the schedule in one SQLite file, for a machine without a
//! database server and for small deployments (one process per region on
//! one host).
//!
//! Every operation runs on a blocking thread over the process's one
//! connection. Each write is a `BEGIN IMMEDIATE` transaction, which takes
//! SQLite's write lock before it reads: a transaction reads the rows it
//! will change, applies the rules of `lifecycle` to them and writes them
//! back, and no other process's write can come between. So several
//! processes on one file stay correct (their claims are serialized), and
//! the lease-token guard is exactly the one the other stores apply. The
//! file is in WAL mode, so readers never wait for the writer.
//!
//! Wake-ups travel inside the process only (SQLite has no LISTEN): another
//! process on the same file finds new work by polling, and reads a
//! destination's pause from its row before each request.

mod claim;
mod connection;
mod destinations;
mod finish;
mod maintenance;
mod rows;
mod schedule;
mod status;
mod transfer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Duration, SubsecRound, Utc};
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;
use parking_lot::Mutex;

pub(super) use connection::migrate;

use super::notify::Wakeup;
use super::{
    ClaimRequest, Clock, Finish, Replayed, Scheduled, Store, StoreError, StoreStats, TokenRequest,
    Tokens, TransitionOutcome,
};
use crate::domain::{
    Attempt, AttemptRecord, ClaimedTask, Destination, DestinationId, FailureReason, Lease,
    NewDestination, NewTask, Payload, PruneReport, PruneRequest, ReconcileReport, ReconcileRequest,
    SendTarget, Task, TaskId,
};
use crate::payload_crypto::PayloadKey;
use crate::policy::Decision;

/// The SQLite store. Cheap to clone: clones share the connection.
#[derive(Clone)]
pub struct SqliteStore {
    shared: Arc<Shared>,
    key: PayloadKey,
    clock: Clock,
}

struct Shared {
    conn: Mutex<SqliteConnection>,
    path: PathBuf,
    stats: StoreStats,
    wakeups: tokio::sync::broadcast::Sender<Wakeup>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.shared.path)
            .field("key", &self.key)
            .field("clock", &self.clock)
            .finish()
    }
}

/// What an operation gets besides the connection.
pub(super) struct Ctx {
    now: DateTime<Utc>,
    key: PayloadKey,
}

impl SqliteStore {
    /// Opens the file (which must exist and be migrated: see [`migrate`]).
    pub async fn open(path: &Path, key: PayloadKey) -> Result<Self, StoreError> {
        let path = path.to_owned();
        let conn = blocking({
            let path = path.clone();
            move || connection::open(&path, false)
        })
        .await?;
        let (wakeups, _) = tokio::sync::broadcast::channel(256);
        Ok(Self {
            shared: Arc::new(Shared {
                conn: Mutex::new(conn),
                path,
                stats: StoreStats::default(),
                wakeups,
            }),
            key,
            clock: Clock::database(),
        })
    }

    /// Replaces the clock (tests and the simulation pin it). Unpinned, the
    /// clock is the host's: every process on one file shares the host.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn stats(&self) -> &StoreStats {
        &self.shared.stats
    }

    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The same file with another payload key, on a connection of its own,
    /// as another process would open it.
    pub async fn reopen_with_key(&self, key: PayloadKey) -> Result<Self, StoreError> {
        Ok(Self::open(&self.shared.path, key)
            .await?
            .with_clock(self.clock.clone()))
    }

    pub(super) fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Wakeup> {
        self.shared.wakeups.subscribe()
    }

    fn wake(&self, wakeup: Wakeup) {
        // No subscriber is fine: nobody in this process is listening.
        let _ = self.shared.wakeups.send(wakeup);
    }

    /// Runs `op` on the connection, on a blocking thread; with `write`, in
    /// a `BEGIN IMMEDIATE` transaction that commits when `op` succeeds.
    pub(super) async fn run<T, F>(&self, write: bool, op: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut SqliteConnection, &Ctx) -> Result<T, StoreError> + Send + 'static,
    {
        let shared = self.shared.clone();
        let clock = self.clock.clone();
        let key = self.key.clone();
        blocking(move || {
            let mut conn = shared.conn.lock();
            // Read after the write lock is taken, so each host's writers
            // see time move forward in commit order.
            let ctx = |clock: &Clock| Ctx {
                now: clock
                    .now_param()
                    .unwrap_or_else(|| Utc::now().trunc_subsecs(6)),
                key: key.clone(),
            };
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                if write {
                    conn.immediate_transaction(|conn| {
                        let ctx = ctx(&clock);
                        op(conn, &ctx)
                    })
                } else {
                    op(&mut conn, &ctx(&clock))
                }
            }));
            outcome.unwrap_or_else(|_| {
                // A panic leaves diesel's transaction open and the file's
                // write lock held. A fresh connection drops the old one,
                // which rolls back what it had written and frees the lock.
                *conn = connection::open(&shared.path, false)?;
                Err(StoreError::Thread(
                    "a database operation panicked; it was rolled back".into(),
                ))
            })
        })
        .await
    }
}

/// Runs blocking work off the async runtime's thread.
async fn blocking<T, F>(work: F) -> Result<T, StoreError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, StoreError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StoreError::Thread(e.to_string()))?
}

/// The next fencing token.
fn next_token(conn: &mut SqliteConnection) -> Result<i64, StoreError> {
    #[derive(diesel::QueryableByName)]
    struct Token {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        last: i64,
    }
    let token: Token =
        diesel::sql_query("UPDATE lease_tokens SET last = last + 1 WHERE id = 1 RETURNING last")
            .get_result(conn)?;
    Ok(token.last)
}

impl Store for SqliteStore {
    async fn add_destination(&self, new: NewDestination) -> Result<Destination, StoreError> {
        self.run(true, move |conn, ctx| destinations::add(conn, new, ctx.now))
            .await
    }

    async fn destination(&self, id: &DestinationId) -> Result<Option<Destination>, StoreError> {
        let id = id.clone();
        self.run(false, move |conn, _| {
            rows::destination_row(conn, &id)?
                .map(|row| row.destination())
                .transpose()
        })
        .await
    }

    async fn signing_secret(&self, id: &DestinationId) -> Result<Option<String>, StoreError> {
        let id = id.clone();
        self.run(false, move |conn, _| {
            let row = rows::destination_row(conn, &id)?.ok_or_else(|| StoreError::NotFound {
                what: "destination",
                id: id.to_string(),
            })?;
            Ok(row.signing_secret)
        })
        .await
    }

    async fn send_target(&self, id: &DestinationId) -> Result<Option<SendTarget>, StoreError> {
        let id = id.clone();
        self.run(false, move |conn, ctx| {
            destinations::send_target(conn, &id, ctx.now)
        })
        .await
    }

    async fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> Result<DateTime<Utc>, StoreError> {
        let id = id.clone();
        let until = self
            .run(true, {
                let id = id.clone();
                move |conn, ctx| destinations::pause(conn, &id, pause, ctx.now)
            })
            .await?;
        self.wake(Wakeup::Destination(id));
        Ok(until)
    }

    async fn take_tokens(
        &self,
        id: &DestinationId,
        rate_per_second: f64,
        burst: u32,
        want: u32,
    ) -> Result<Tokens, StoreError> {
        let ask = TokenRequest {
            destination: id.clone(),
            rate_per_second,
            burst,
            want,
        };
        let mut answers = self.take_tokens_many(std::slice::from_ref(&ask)).await?;
        answers.pop().flatten().ok_or_else(|| StoreError::NotFound {
            what: "destination",
            id: id.to_string(),
        })
    }

    async fn take_tokens_many(
        &self,
        asks: &[TokenRequest],
    ) -> Result<Vec<Option<Tokens>>, StoreError> {
        let asks = asks.to_vec();
        self.run(true, move |conn, ctx| {
            destinations::take_tokens_many(conn, &asks, ctx.now)
        })
        .await
    }

    async fn schedule(&self, new: NewTask) -> Result<Scheduled, StoreError> {
        let mut answers = self.schedule_many(vec![new]).await?;
        answers
            .pop()
            .unwrap_or_else(|| Err(StoreError::Thread("no answer for the task".into())))
    }

    async fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
        let answers = self
            .run(true, move |conn, ctx| {
                schedule::schedule_many(conn, ctx, batch)
            })
            .await?;
        let mut woken = Vec::new();
        for scheduled in answers.iter().flatten().filter(|s| s.created) {
            if !woken.contains(&scheduled.task.region) {
                woken.push(scheduled.task.region);
                self.wake(Wakeup::DueWork(scheduled.task.region));
            }
        }
        Ok(answers)
    }

    async fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        self.run(false, move |conn, _| rows::task(conn, id)).await
    }

    async fn attempts(&self, id: TaskId) -> Result<Vec<Attempt>, StoreError> {
        self.run(false, move |conn, _| finish::attempts(conn, id))
            .await
    }

    async fn replay(&self, id: TaskId, horizon: Duration) -> Result<Replayed, StoreError> {
        self.run(true, move |conn, ctx| {
            finish::replay(conn, id, horizon, ctx.now)
        })
        .await
    }

    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        let request = request.clone();
        // Only a reclaim writes; a report alone must not hold the write
        // lock while it reads.
        self.run(request.reclaim, move |conn, ctx| {
            maintenance::reconcile(conn, &request, ctx.now)
        })
        .await
    }

    async fn prune(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        super::rules::check_prune(request)?;
        // The cutoff is fixed once per run, as the other stores fix it, so
        // a run ends however fast tasks keep ending.
        let now = self.run(false, |_, ctx| Ok(ctx.now)).await?;
        let cutoff = now
            .checked_sub_signed(request.older_than)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let regions = match request.region {
            Some(region) => vec![region],
            None => {
                self.run(false, |conn, _| maintenance::regions(conn))
                    .await?
            }
        };
        let mut report = PruneReport::default();
        // Region by region, one short transaction per batch, so the
        // runtime's writes get the lock between them.
        let size = request.batch_size;
        for region in regions {
            loop {
                let (tasks, attempts, payloads) = self
                    .run(true, move |conn, _| {
                        maintenance::prune_batch(conn, region, cutoff, size)
                    })
                    .await?;
                report.add_batch(tasks, attempts, payloads);
                if tasks < u64::from(size) {
                    break;
                }
            }
        }
        Ok(report)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.run(false, |conn, _| {
            diesel::sql_query("SELECT 1").execute(conn)?;
            Ok(())
        })
        .await
    }

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        let payload_ref = task.payload_ref;
        self.run(false, move |conn, ctx| {
            claim::open_payload(conn, &ctx.key, payload_ref)
        })
        .await
    }

    async fn claim_due(&self, request: &ClaimRequest) -> Result<Vec<ClaimedTask>, StoreError> {
        let request = request.clone();
        let claimed = self
            .run(true, move |conn, ctx| claim::claim_due(conn, ctx, &request))
            .await?;
        let reclaimed = claimed.iter().filter(|c| c.reclaimed).count();
        StoreStats::add(&self.shared.stats.claimed, claimed.len() as u64);
        StoreStats::add(&self.shared.stats.reclaimed, reclaimed as u64);
        Ok(claimed)
    }

    async fn mark_delivered(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        self.end(lease, finish::End::Delivered, record).await
    }

    async fn move_to_retry_wait(
        &self,
        lease: &Lease,
        available_at: DateTime<Utc>,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        self.end(lease, finish::End::RetryWait(available_at), record)
            .await
    }

    async fn fail(
        &self,
        lease: &Lease,
        reason: &FailureReason,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        self.end(lease, finish::End::Failed(reason.clone()), record)
            .await
    }

    async fn abandon(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        self.end(lease, finish::End::Abandoned, record).await
    }

    async fn release(
        &self,
        lease: &Lease,
        after: Option<Duration>,
    ) -> Result<TransitionOutcome, StoreError> {
        let lease = lease.clone();
        let outcome = self
            .run(true, move |conn, ctx| {
                finish::release(conn, &lease, after, ctx.now)
            })
            .await?;
        self.count_fenced(outcome);
        Ok(outcome)
    }

    async fn extend_lease(
        &self,
        lease: &Lease,
        by: Duration,
    ) -> Result<TransitionOutcome, StoreError> {
        let lease = lease.clone();
        self.run(true, move |conn, ctx| {
            finish::extend(conn, &lease, by, ctx.now)
        })
        .await
    }

    /// The pause and the attempt's end in one transaction.
    async fn finish(
        &self,
        lease: &Lease,
        destination: &DestinationId,
        decision: &Decision,
    ) -> Result<TransitionOutcome, StoreError> {
        let one = Finish {
            lease: lease.clone(),
            destination: destination.clone(),
            decision: decision.clone(),
        };
        let mut outcomes = self.finish_many(std::slice::from_ref(&one)).await?;
        outcomes
            .pop()
            .ok_or_else(|| StoreError::Thread("no answer for the finish".into()))
    }

    async fn finish_many(&self, batch: &[Finish]) -> Result<Vec<TransitionOutcome>, StoreError> {
        let batch = batch.to_vec();
        let paused: Vec<DestinationId> = batch
            .iter()
            .filter(|f| f.decision.pause_delay().is_some())
            .map(|f| f.destination.clone())
            .collect();
        let outcomes = self
            .run(true, move |conn, ctx| {
                finish::finish_many(conn, &batch, ctx.now)
            })
            .await?;
        let fenced = outcomes
            .iter()
            .filter(|o| **o == TransitionOutcome::Fenced)
            .count();
        StoreStats::add(&self.shared.stats.fenced, fenced as u64);
        for id in paused {
            self.wake(Wakeup::Destination(id));
        }
        Ok(outcomes)
    }
}

impl SqliteStore {
    async fn end(
        &self,
        lease: &Lease,
        end: finish::End,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        let lease = lease.clone();
        let record = record.clone();
        let outcome = self
            .run(true, move |conn, ctx| {
                finish::end_attempt(conn, &lease, &end.with(&record), ctx.now)
            })
            .await?;
        self.count_fenced(outcome);
        Ok(outcome)
    }

    fn count_fenced(&self, outcome: TransitionOutcome) {
        if outcome == TransitionOutcome::Fenced {
            StoreStats::add(&self.shared.stats.fenced, 1);
        }
    }
}
