//! The paced workloads (steady, soak, renewals): the region's processes
//! run from the start and take the enqueue on their own API while they
//! deliver, as in production; tasks arrive at a fixed rate for a fixed
//! time, each due when it arrives (plus LOAD_LEAD_MS). Renewals first
//! writes its backdrop under them (`backdrop`). The soak also samples
//! throughput, lag, dead tuples and memory every LOAD_SAMPLE_SECONDS.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backdrop;
use crate::ceiling::Ceiling;
use crate::clock::now_ms;
use crate::enqueue::{self, Api, Pace, REGION};
use crate::error::LoadError;
use crate::process::RemitProcess;
use crate::progress::Progress;
use crate::report::{percentile, Report, Sample};
use crate::run::{Driven, Run};
use crate::workloads::Workload;

/// How often arrivals go out.
const TICK: Duration = Duration::from_millis(100);

pub async fn paced(
    run: Run<'_>,
    ceiling: Option<Ceiling>,
) -> Result<(Report, Option<Ceiling>), LoadError> {
    let s = run.settings;
    let processes = s.processes[0];
    let labels: Vec<String> = (1..=processes).map(|n| format!("{REGION}-{n}")).collect();
    let mut running = run.spawn(REGION, &labels, &[]).await?;
    let api = Api::new(running[0].api());
    api.add_destinations(&run.destination_urls(), s.enqueue_connections)
        .await?;
    // After the destinations, which the backdrop's rows reference; while
    // the region runs, as a schedule's rows are written under it.
    let backdrop = match s.backdrop {
        0 => None,
        _ => Some(backdrop::fill(&run.db, s).await?),
    };
    run.db.settle().await;
    let transactions_before = run.db.transactions().await?;
    let wal_before = run.db.wal_position().await?;
    let statements_before = run.db.statements().await?;

    let enqueued = Arc::new(AtomicU64::new(0));
    let pace = Pace {
        rate: s.rate,
        seconds: s.seconds,
        lead_ms: s.lead_ms,
        tick: TICK,
        batch: s.enqueue_batch,
        connections: s.enqueue_connections,
    };
    let started = now_ms();
    let clock = Instant::now();
    let arrivals = actix_rt::spawn(enqueue::paced(
        api,
        run.shape.clone(),
        pace,
        enqueued.clone(),
    ));
    let sampling = s.workload == Workload::Soak;
    let mut samples = Vec::new();
    let mut last_sample = (0.0, 0u64);
    let deadline = Duration::from_secs_f64(s.seconds) + s.timeout;
    let mut progress = Progress::new(s.workload.name(), s.tasks as u64);
    loop {
        actix_rt::time::sleep(Duration::from_millis(100)).await;
        let delivered = run.receiver.delivered();
        let arrived = enqueued.load(Ordering::Relaxed);
        progress.set(delivered, &format!("enqueued {arrived}"));
        let t = clock.elapsed().as_secs_f64();
        if sampling && t - last_sample.0 >= s.sample_seconds {
            let sample = sample(&run, &running, t, last_sample, delivered, arrived).await?;
            progress.println(&format!(
                "{:>5.0} s: {:>6.0} deliveries/s, backlog {}, lag p99 {} ms, dead tuples {}, rss {:.1} MiB",
                sample.t_s,
                sample.deliveries_per_s,
                arrived.saturating_sub(delivered),
                sample.lag_p99_ms.map_or("-".into(), |l| format!("{l:.0}")),
                sample.dead_tuples,
                sample.rss_mb
            ));
            samples.push(sample);
            last_sample = (t, delivered);
        }
        if arrivals.is_finished() && delivered >= arrived {
            break;
        }
        if let Some(why) = running.iter_mut().find_map(RemitProcess::exited) {
            progress.println(&format!("{}: {why}", s.workload));
            break;
        }
        if clock.elapsed() > deadline {
            progress.println(&format!(
                "{}: gave up after {deadline:?} with {delivered} of {arrived} delivered",
                s.workload
            ));
            break;
        }
    }
    drop(progress);
    let enqueued = arrivals
        .await
        .map_err(|e| LoadError::Api(format!("the arrivals panicked: {e}")))??;
    let usage = Run::stop(&mut running).await;
    let driven = Driven {
        processes,
        enqueue: enqueued,
        // The first task is due a lead after the arrivals start.
        window_start_ms: started + s.lead_ms.max(0) as f64,
        transactions_before,
        wal_before,
        statements_before,
        usage,
        lag_from: "due",
        target_rate: Some(s.rate),
        samples,
        backdrop,
    };
    run.conclude(driven, ceiling).await
}

/// The window since the previous sample.
async fn sample(
    run: &Run<'_>,
    running: &[RemitProcess],
    t: f64,
    (last_t, last_delivered): (f64, u64),
    delivered: u64,
    enqueued: u64,
) -> Result<Sample, LoadError> {
    let mut lags = run.receiver.take_window();
    lags.sort_by(f64::total_cmp);
    Ok(Sample {
        t_s: t,
        deliveries_per_s: (delivered - last_delivered) as f64 / (t - last_t).max(1e-3),
        enqueued,
        delivered,
        lag_p50_ms: percentile(&lags, 50.0),
        lag_p99_ms: percentile(&lags, 99.0),
        dead_tuples: run.db.dead_tuples().await?,
        rss_mb: running.iter().map(|p| p.usage().rss_now_mb).sum(),
    })
}
