//! The web console under /console: server-rendered pages for the people on
//! call, signed in with an API token. It shows a region's queue, its
//! destinations and its tasks, and lets an admin token enable, disable and
//! rotate destinations, replay failed tasks and cancel tasks, one or in
//! bulk. It never shows a payload.
//!
//! # Layout
//! - `state`: what the handlers share (stores, region, session key,
//!   sign-in guard, the runtime's values).
//! - `session`: the sealed `remit_console` cookie (who signed in, until
//!   when, the CSRF value) and the check every page makes with it.
//! - `sign_in`: the sign-in form, signing in and out.
//! - `sign_in_limit`: failed sign-ins per client address and lockouts,
//!   as a pure rule of `now` (its tests in `sign_in_limit_tests`).
//! - `sign_in_guard`: that limit shared by every request, its clock and
//!   its counter of refusals.
//! - `overview`: the region's counts and the last hour's plots;
//!   `trouble` its list of destinations that need a person.
//! - `read_source`: the line that says a page was read from a replica, and
//!   how far behind it is.
//! - `charts`: the plots, as inline SVG: the last hour's, and a
//!   destination's week.
//! - `destinations`: each destination's state and counts, with its
//!   actions.
//! - `destination_page`: one destination's actions and its stats over the
//!   last week, hour by hour.
//! - `destination_actions`: what an admin may do to a destination, on the
//!   list and on its page, each confirmed first.
//! - `destination_settings`: one destination's settings page and its save.
//! - `tasks`: the task list, a task's page, replaying one task;
//!   `task_changes` cancelling or moving it from that page; `task_access`
//!   which task a request may see.
//! - `search`: the task search form, what it filters and its next page
//!   (the task list and the bulk replay form read it).
//! - `replays`: bulk replay and bulk cancel by filter (a job of either
//!   action) and its progress.
//! - `audit`: the audit log of admin actions, with the API's filters;
//!   `audit_diff` each act's change as one line.
//! - `layout`: the page frame, navigation, the error pages and the cells
//!   pages share; `error`: what a page cannot show, and why.
//! - `headers`: the security headers every answer carries.
//! - `failures`: server-side failures logged with their cause.
//! - `assets/`: the style sheet and the live-refresh script, compiled in.

mod audit;
mod audit_diff;
mod charts;
mod destination_actions;
mod destination_page;
mod destination_settings;
mod destinations;
mod error;
mod failures;
mod headers;
mod layout;
mod overview;
mod read_source;
mod replays;
mod search;
mod session;
mod sign_in;
mod sign_in_guard;
mod sign_in_limit;
mod state;
mod task_access;
mod task_changes;
mod tasks;
mod trouble;

use actix_web::middleware::from_fn;
use actix_web::{web, HttpResponse};

pub use error::ConsoleError;
pub use session::Viewer;
pub use sign_in_guard::{SignInClock, SignInGuard, MAX_TRACKED_ADDRESSES};
pub use sign_in_limit::LimitRule;
pub use state::{ConsoleState, RuntimeDefaults};

/// The console's routes, to register on an actix-web app beside the API's
/// (before its default service).
pub fn routes(state: ConsoleState) -> impl FnOnce(&mut web::ServiceConfig) {
    move |config| {
        config.service(
            web::scope("/console")
                .app_data(web::Data::new(state))
                .app_data(web::FormConfig::default().limit(16 * 1024))
                // The last wrap runs first: the headers go on every answer,
                // failures included, and failures are logged with their cause.
                .wrap(from_fn(failures::log_server_errors))
                .wrap(from_fn(headers::secure))
                .route("", web::get().to(home))
                .route("/", web::get().to(home))
                .route("/sign-in", web::get().to(sign_in::form))
                .route("/sign-in", web::post().to(sign_in::submit))
                .route("/sign-out", web::post().to(sign_in::sign_out))
                .route("/overview", web::get().to(overview::page))
                .route("/destinations", web::get().to(destinations::page))
                .route(
                    "/destinations/{action}",
                    web::post().to(destination_actions::act),
                )
                .route(
                    "/destinations/{id}/settings",
                    web::get().to(destination_settings::page),
                )
                .route(
                    "/destinations/{id}/settings",
                    web::post().to(destination_settings::save),
                )
                .route("/destinations/{id}", web::get().to(destination_page::page))
                .route("/tasks", web::get().to(tasks::search))
                .route("/tasks/{id}", web::get().to(tasks::page))
                .route("/tasks/{id}/replay", web::post().to(tasks::replay))
                .route("/tasks/{id}/cancel", web::post().to(task_changes::cancel))
                .route(
                    "/tasks/{id}/reschedule",
                    web::post().to(task_changes::reschedule),
                )
                .route("/replays", web::post().to(replays::create))
                .route("/cancels", web::post().to(replays::cancel))
                .route("/replays/{id}", web::get().to(replays::page))
                .route("/audit", web::get().to(audit::page))
                .route("/assets/console.css", web::get().to(style_sheet))
                .route("/assets/console.js", web::get().to(script))
                .default_service(web::to(|| async {
                    Err::<HttpResponse, _>(ConsoleError::NotFound("no such page".into()))
                })),
        );
    }
}

/// `/console`: the overview, or the sign-in form without a session.
async fn home(state: web::Data<ConsoleState>, request: actix_web::HttpRequest) -> HttpResponse {
    let to = match session::viewer(&request, &state).await {
        Ok(viewer) => sign_in::landing(&viewer.caller),
        Err(_) => "/console/sign-in",
    };
    layout::see_other(to)
}

const STYLE_SHEET: &str = include_str!("assets/console.css");
const SCRIPT: &str = include_str!("assets/console.js");

/// The assets are part of the binary: they change only with a release, so
/// they may be cached for a day.
async fn style_sheet() -> HttpResponse {
    asset("text/css; charset=utf-8", STYLE_SHEET)
}

async fn script() -> HttpResponse {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

fn asset(content_type: &str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(("cache-control", "public, max-age=86400"))
        .body(body)
}
