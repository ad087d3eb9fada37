//! The drain-shaped workloads (burst, throttled, many-destinations, and
//! each step of scale-out): the whole backlog is enqueued first, through a
//! front process that only takes the API, then `processes` processes of
//! the region are started and timed until the receiver has every task.
//!
//! The front serves region us and accepts eu tasks
//! (`allow_other_regions`), so nothing is delivered while the backlog is
//! written, and enqueue and drain are each measured alone.

use crate::ceiling::Ceiling;
use crate::clock::now_ms;
use crate::enqueue::{self, Api, REGION};
use crate::error::LoadError;
use crate::report::Report;
use crate::run::{Driven, Run};

pub async fn drain(
    run: Run<'_>,
    processes: usize,
    ceiling: Option<Ceiling>,
) -> Result<(Report, Option<Ceiling>), LoadError> {
    let s = run.settings;
    let mut front = run
        .spawn(
            "us",
            &["front".to_owned()],
            &[("REMIT_ALLOW_OTHER_REGIONS", "true")],
        )
        .await?;
    let api = Api::new(front[0].api());
    eprintln!(
        "{}: registering {} destinations…",
        s.workload, s.destinations
    );
    api.add_destinations(&run.destination_urls(), s.enqueue_connections)
        .await?;
    eprintln!("{}: enqueueing {} tasks…", s.workload, s.tasks);
    let enqueued = enqueue::all_at_once(
        &api,
        &run.shape,
        s.tasks,
        now_ms() as i64,
        s.enqueue_batch,
        s.enqueue_connections,
    )
    .await?;
    eprintln!(
        "{}: enqueued at {:.0}/s ({} refused)",
        s.workload,
        enqueued.per_second(),
        enqueued.refused
    );
    Run::stop(&mut front).await;
    run.db.analyze().await?;
    run.db.settle().await;
    let transactions_before = run.db.transactions().await?;
    let wal_before = run.db.wal_position().await?;
    let statements_before = run.db.statements().await?;

    let started = now_ms();
    run.receiver.set_origin(started);
    let labels: Vec<String> = (1..=processes).map(|n| format!("{REGION}-{n}")).collect();
    let mut delivering = run.spawn(REGION, &labels, &[]).await?;
    run.wait_delivered(enqueued.tasks as u64, s.workload.name(), &mut delivering)
        .await;
    let usage = Run::stop(&mut delivering).await;
    let driven = Driven {
        processes,
        enqueue: enqueued,
        window_start_ms: started,
        transactions_before,
        wal_before,
        statements_before,
        usage,
        lag_from: "runtime_start",
        target_rate: None,
        samples: Vec::new(),
        backdrop: None,
    };
    run.conclude(driven, ceiling).await
}
