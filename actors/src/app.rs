//! A whole remit process: the region's actor runtime plus the HTTP API
//! and the web console, started together and stopped gracefully on
//! SIGTERM or SIGINT.
//!
//! # Layout
//! - `error`: what stops a process, and its exit status.
//! - `process`: what every process sets up first: the crypto provider, and
//!   the signals that stop it.
//! - `console_only`: `remit console`, the console served alone.
//! - `database`: the configured database as a process opens it.
//! - `payload_key`: which payload keys a process holds.

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use actix::prelude::*;
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};
use remit::store::Database;
use slog::{info, warn};

use crate::api::{self, ApiState, Progress, TaskRules};
use crate::config::{Config, ConsoleListener};
use crate::console::{self, ConsoleState};
use crate::runtime::{
    buckets, finisher, quotas, Capacity, ChangedTasks, Holds, Metrics, Paces, RegionSupervisor,
    Restarts, RuntimeStats, Shared, Shutdown, Targets, WallClock,
};
use crate::telemetry::Telemetry;

mod console_only;
mod database;
mod error;
mod payload_key;
mod process;
pub use console_only::{run as run_console, ConsoleServer};
pub use database::{connect, connect_to_seal, reports};
pub use error::AppError;
pub use payload_key::payload_key;
pub use process::install_crypto_provider;
use process::Signals;

/// A running region runtime and its API server.
pub struct Runtime {
    supervisor: Addr<RegionSupervisor>,
    servers: Vec<actix_web::dev::ServerHandle>,
    api_addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    stats: Arc<RuntimeStats>,
    capacity: Capacity,
    telemetry: Telemetry,
    /// Works the region's bulk replays; aborted on shutdown.
    jobs: actix_rt::task::JoinHandle<()>,
    log: slog::Logger,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("api_addr", &self.api_addr)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Starts the supervisor and the API inside the current actix system.
    /// Delivery gets a pool of its own on `store`'s database, planning each
    /// statement once (`database.pool_size`), and the API another
    /// (`api.pool_size`).
    pub async fn start(
        config: Config,
        store: Database,
        log: slog::Logger,
    ) -> Result<Self, AppError> {
        Self::start_with_clock(config, store, log, WallClock::default()).await
    }

    /// Starts with a wall clock of the caller's choosing (tests play a host
    /// whose clock is off).
    pub async fn start_with_clock(
        config: Config,
        store: Database,
        log: slog::Logger,
        wall: WallClock,
    ) -> Result<Self, AppError> {
        let region = config.region()?;
        let store = store.with_disable_rule(config.destinations.disable_rule());
        let lease_owner = config.lease_owner();
        let log =
            log.new(slog::o!("region" => region.to_string(), "lease_owner" => lease_owner.clone()));
        let api_store = store.with_own_pool(config.api.pool_size).await?;
        let reports = reports(&config, &api_store).await?;
        // Delivery's pool plans each statement once; the API's and the
        // reports' plan theirs for the values asked (a search's filters).
        let store = store.with_generic_plans(config.database.pool_size).await?;
        let stats = Arc::new(RuntimeStats::new(Metrics::new(
            region,
            config.metrics.max_destinations,
        )));
        let running = Arc::new(AtomicBool::new(false));
        // Slots for as many claimed tasks again as requests may be under
        // way: the next are claimed and queued while these are sent.
        let max_in_flight = config.send.max_in_flight as usize;
        let capacity = Capacity::new(max_in_flight.saturating_mul(2));
        let restarts = Restarts::default();
        let egress = Arc::new(config.egress()?);
        let progress_capacity = capacity.clone();
        let telemetry = Telemetry::start(&config, &lease_owner, &log)?;

        let state = ApiState {
            store: api_store,
            reports: reports.clone(),
            rules: TaskRules {
                serving: region,
                allow_other_regions: config.allow_other_regions,
                horizon: config.retry_policy().horizon,
            },
            horizons: Default::default(),
            token: config.api.token.clone(),
            egress: egress.clone(),
            running: running.clone(),
            progress: Progress {
                restarts: restarts.clone(),
                capacity: capacity.clone(),
                lease: std::time::Duration::from_secs(config.lease.seconds),
            },
            stats: stats.clone(),
            log: log.new(slog::o!("component" => "api")),
            telemetry: telemetry.clone(),
        };
        // Every listener is opened before any actor starts: a port in use
        // ends the start with one error, and nothing to stop.
        let (api_listener, metrics_listener) = match &config.metrics.bind {
            Some(_) => (api::Listener::Api, Some(api::Listener::Metrics)),
            None => (api::Listener::Everything, None),
        };
        // The console, on the listener `console.listener` names.
        let console = config.console.enabled.then(|| {
            let mut console = ConsoleState::new(
                &config,
                region,
                state.store.clone(),
                payload_key(&config).ok().as_ref(),
                log.new(slog::o!("component" => "console")),
            );
            console.reports = reports.clone();
            console.replica = config.database.read_url.is_some();
            console.sign_ins = console
                .sign_ins
                .count_refusals_in(stats.metrics.console_sign_ins_refused());
            console
        });
        let (api_console, metrics_console) = match config.console.listener {
            ConsoleListener::Api => (console, None),
            ConsoleListener::Metrics => (None, console),
        };
        let api_server = listen(
            &state,
            api_listener,
            api_console,
            "api.bind",
            &config.api.bind,
        )?;
        let metrics_server = match (metrics_listener, &config.metrics.bind) {
            (Some(listener), Some(bind)) => {
                match listen(&state, listener, metrics_console, "metrics.bind", bind) {
                    Ok(server) => Some(server),
                    Err(e) => {
                        api_server.1.stop(false).await;
                        return Err(e);
                    }
                }
            }
            _ => None,
        };
        if config.api.token.is_none() {
            warn!(log, "no bootstrap API token is set (api.token or REMIT_API_TOKEN): /v1 accepts only tokens made with `remit token create`");
        }
        let shared = Shared {
            store: store.clone(),
            reports: reports.clone(),
            region,
            lease_owner: lease_owner.into(),
            policy: Rc::new(config.retry_policy()),
            egress: egress.clone(),
            log: log.clone(),
            capacity: capacity.clone(),
            pauses: Holds::default(),
            busy: Holds::default(),
            paces: Paces::default(),
            targets: Targets::default(),
            changed: ChangedTasks::default(),
            finisher: finisher::start(store.clone(), log.clone(), stats.clone()),
            buckets: buckets::start(store.clone(), log.clone()),
            quotas: quotas::start(store.clone(), log.clone()),
            requests: Arc::new(tokio::sync::Semaphore::new(max_in_flight.max(1))),
            restarts: restarts.clone(),
            wall,
            stats: stats.clone(),
            config: Rc::new(config.clone()),
            telemetry: telemetry.clone(),
        };
        let supervisor = RegionSupervisor::new(shared, running).start();
        // On the API's pool, so a long replay never waits on delivery's.
        let jobs = crate::runtime::jobs::spawn(state.store.clone(), region, log.clone());
        let mut servers = Vec::new();
        let (api_addr, handle) = api_server;
        servers.push(handle);
        info!(log, "API listening"; "addr" => %api_addr);
        let metrics_addr = metrics_server.map(|(addr, handle)| {
            servers.push(handle);
            info!(log, "metrics and probes listening"; "addr" => %addr);
            addr
        });
        Ok(Self {
            supervisor,
            servers,
            api_addr,
            metrics_addr,
            stats,
            capacity: progress_capacity,
            telemetry,
            jobs,
            log,
        })
    }

    pub fn api_addr(&self) -> SocketAddr {
        self.api_addr
    }

    /// Where /metrics is served when `metrics.bind` is set.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    pub fn stats(&self) -> &RuntimeStats {
        &self.stats
    }

    /// Claimed tasks held in memory now (queued or in flight).
    pub fn held(&self) -> usize {
        self.capacity.held()
    }

    /// Crashes one sender actor as a failure would (a drill, and the
    /// demo's): the tasks it held go back to the database and the
    /// supervisor restarts it. Answers the tasks it held.
    pub async fn crash_a_sender(&self) -> Vec<remit::domain::TaskId> {
        self.supervisor
            .send(crate::runtime::CrashSender)
            .await
            .unwrap_or_default()
    }

    /// Stops claiming, lets in-flight sends finish within the grace period,
    /// hands every other lease back, then stops the API and exports the
    /// last spans.
    pub async fn shutdown(self) {
        // A batch cut off here rolls back whole; the next process carries
        // on from the cursor it left.
        self.jobs.abort();
        let _ = self.supervisor.send(Shutdown).await;
        for server in self.servers {
            server.stop(true).await;
        }
        if let Err(e) = self.telemetry.shutdown().await {
            warn!(self.log, "the last spans could not be exported"; "error" => e);
        }
        info!(self.log, "stopped");
    }
}

/// Opens `addr` for `listener`'s routes and starts serving them; answers
/// the address bound (the port, when `addr` asked for port 0).
fn listen(
    state: &ApiState,
    listener: api::Listener,
    console: Option<ConsoleState>,
    what: &'static str,
    addr: &str,
) -> Result<(SocketAddr, actix_web::dev::ServerHandle), AppError> {
    let failed = |source| AppError::Bind {
        what,
        addr: addr.to_owned(),
        source,
    };
    let state = state.clone();
    let server = HttpServer::new(move || {
        let mut app = App::new().app_data(web::Data::new(state.clone()));
        if let Some(console) = &console {
            app = app.configure(console::routes(console.clone()));
        }
        app.configure(api::routes(listener))
            .wrap(from_fn(api::canonical_path::refuse_non_canonical))
    })
    .workers(1)
    .disable_signals()
    .shutdown_timeout(5)
    .bind(addr)
    .map_err(failed)?;
    let bound = server
        .addrs()
        .first()
        .copied()
        .ok_or_else(|| failed(std::io::Error::other("bound to no address")))?;
    let server = server.run();
    let handle = server.handle();
    actix_rt::spawn(server);
    Ok((bound, handle))
}

/// `remit run`: runs until SIGTERM or SIGINT, then shuts down gracefully.
pub fn run(config: Config) -> Result<(), AppError> {
    install_crypto_provider();
    let level = config.log_level()?;
    let key = payload_key(&config)?;
    let (log, _guard) = crate::logging::logger(&config, level);
    actix_rt::System::new().block_on(async move {
        // Handlers first: a SIGTERM that arrives once the API answers must
        // find them in place.
        let signals = Signals::install();
        // First: which database, and whether it is the default.
        info!(log, "database"; "at" => config.database_description(),
              "default" => config.database_is_default());
        let store = connect_to_seal(&config, key).await?;
        let runtime = Runtime::start(config, store, log.clone()).await?;
        let signal = signals.next().await;
        info!(log, "signal received; shutting down"; "signal" => signal);
        runtime.shutdown().await;
        Ok(())
    })
}
