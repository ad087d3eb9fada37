//! `remit console`: the web console (and /healthz) against the configured
//! database, with no delivery runtime, plus the region's replay job runner
//! so that bulk replays asked for here make progress.

use std::net::SocketAddr;

use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpResponse, HttpServer};
use remit::domain::Region;
use remit::payload_crypto::PayloadKey;
use remit::store::Database;
use slog::info;

use super::database::connect;
use super::error::AppError;
use super::payload_key::payload_key;
use super::process::{install_crypto_provider, Signals};
use crate::config::Config;
use crate::console::{self, ConsoleState, SignInClock};

/// A console being served.
#[derive(Debug)]
pub struct ConsoleServer {
    addr: SocketAddr,
    server: actix_web::dev::ServerHandle,
    replays: actix_rt::task::JoinHandle<()>,
}

impl ConsoleServer {
    /// Serves `region`'s console on `bind` inside the current actix system.
    pub async fn start(
        config: &Config,
        region: Region,
        store: Database,
        bind: &str,
        log: slog::Logger,
    ) -> Result<Self, AppError> {
        Self::start_with_clock(config, region, store, bind, log, SignInClock::default()).await
    }

    /// Starts with the limit on failed sign-ins reading `clock` (tests
    /// move it to the end of a lockout). There is no /metrics here: the
    /// sign-ins the limit refuses are counted, not exported.
    pub async fn start_with_clock(
        config: &Config,
        region: Region,
        store: Database,
        bind: &str,
        log: slog::Logger,
        clock: SignInClock,
    ) -> Result<Self, AppError> {
        let mut state = ConsoleState::new(
            config,
            region,
            store.clone(),
            payload_key(config).ok().as_ref(),
            log.new(slog::o!("component" => "console")),
        );
        state.sign_ins = state.sign_ins.with_clock(clock);
        state.reports = super::database::reports(config, &store).await?;
        state.replica = config.database.read_url.is_some();
        let failed = |source| AppError::Bind {
            what: "--bind",
            addr: bind.to_owned(),
            source,
        };
        let server = HttpServer::new(move || {
            App::new()
                .configure(console::routes(state.clone()))
                .route("/healthz", web::get().to(healthz))
                .wrap(from_fn(crate::api::canonical_path::refuse_non_canonical))
        })
        .workers(1)
        .disable_signals()
        .shutdown_timeout(5)
        .bind(bind)
        .map_err(failed)?;
        let addr = server
            .addrs()
            .first()
            .copied()
            .ok_or_else(|| failed(std::io::Error::other("bound to no address")))?;
        let server = server.run();
        let handle = server.handle();
        actix_rt::spawn(server);
        let replays = crate::runtime::jobs::spawn(store, region, log.clone());
        info!(log, "console listening"; "addr" => %addr, "region" => %region);
        Ok(Self {
            addr,
            server: handle,
            replays,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub async fn stop(self) {
        self.replays.abort();
        self.server.stop(true).await;
    }
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .body("ok")
}

/// `remit console --bind ADDR`: runs until SIGTERM or SIGINT.
pub fn run(config: Config, bind: String) -> Result<(), AppError> {
    install_crypto_provider();
    let level = config.log_level()?;
    let region = config.region()?;
    // The console opens no payload: without a configured key, a throwaway
    // one connects (and sessions last as long as the process).
    let key = payload_key(&config).unwrap_or_else(|_| PayloadKey::from_bytes(rand::random()));
    let (log, _guard) = crate::logging::logger(&config, level);
    actix_rt::System::new().block_on(async move {
        let signals = Signals::install();
        info!(log, "database"; "at" => config.database_description());
        let store = connect(&config, key).await?;
        let console = ConsoleServer::start(&config, region, store, &bind, log.clone()).await?;
        let signal = signals.next().await;
        info!(log, "signal received; shutting down"; "signal" => signal);
        console.stop().await;
        Ok(())
    })
}
