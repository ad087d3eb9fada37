//! The web console over real HTTP, on PostgreSQL and SQLite: sessions
//! (cookie attributes, expiry by revocation, CSRF), what each kind of
//! token may see and do, the security headers, the overview's counts, and
//! that no page ever shows a payload. The browser itself is tested
//! elsewhere (Chromium); these prove the server's promises.

mod audit;
mod browser;
mod destination_settings;
mod listeners;
mod pages;
mod path_variants;
mod replays;
mod replica;
mod sessions;
mod sign_in_limit;
mod tokens;
mod trouble;

use chrono::Utc;
use remit::domain::{
    DestinationId, NewTask, Payload, Region, ReminderId, TaskId, TenantId, TokenGrant,
};
use remit::store::{ApiTokens, Schedule};
use remit_actors::app::ConsoleServer;
use remit_actors::console::SignInClock;

use crate::support::{self, TestDb};

/// `remit console` on the test's database, serving `region`.
async fn console(db: &TestDb, region: Region) -> ConsoleServer {
    console_with(db, region, |_| {}).await
}

/// As [`console`], with settings of the test's choosing.
async fn console_with(
    db: &TestDb,
    region: Region,
    configure: impl FnOnce(&mut remit_actors::config::Config),
) -> ConsoleServer {
    console_with_clock(db, region, configure, SignInClock::default()).await
}

/// As [`console_with`], its limit on failed sign-ins reading `clock`.
async fn console_with_clock(
    db: &TestDb,
    region: Region,
    configure: impl FnOnce(&mut remit_actors::config::Config),
    clock: SignInClock,
) -> ConsoleServer {
    remit_actors::app::install_crypto_provider();
    let mut config = support::config(db, region, "console-1");
    configure(&mut config);
    ConsoleServer::start_with_clock(
        &config,
        region,
        db.store.clone(),
        "127.0.0.1:0",
        support::logger(),
        clock,
    )
    .await
    .expect("the console starts")
}

/// A stored token of `scope`, limited to `tenants` when any are given.
async fn token(db: &TestDb, scope: &str, tenants: &[&str]) -> (remit::domain::ApiToken, String) {
    let grant = TokenGrant {
        scope: scope.into(),
        tenants: tenants.iter().map(|t| (*t).to_owned()).collect(),
        ..TokenGrant::default()
    };
    let (new, token) = grant.check(Utc::now()).unwrap();
    (db.store.add_api_token(new).await.unwrap(), token)
}

/// A task of `tenant` due now, whose payload holds `payload`.
async fn task(
    db: &TestDb,
    tenant: &str,
    reminder: &str,
    destination: &DestinationId,
    region: Region,
    payload: &str,
) -> TaskId {
    db.store
        .schedule(NewTask {
            tenant_id: TenantId::new(tenant).unwrap(),
            reminder_id: ReminderId::new(reminder).unwrap(),
            destination_id: destination.clone(),
            region,
            not_before: Utc::now(),
            retry_horizon: chrono::Duration::hours(1),
            payload: Payload::json(format!(r#"{{"note":"{payload}"}}"#)),
            ordering_key: None,
            traceparent: None,
        })
        .await
        .unwrap()
        .task
        .id
}
