//! Signing in with an API token (the bootstrap token or one made with
//! `remit token create`), checked exactly as /v1 checks a bearer token,
//! and signing out. Too many failed sign-ins from one client address lock
//! it out for a while (`sign_in_guard`): then every sign-in from it, with
//! a good token or not, is refused 429 with Retry-After.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use maud::html;
use serde::Deserialize;
use slog::{info, warn};

use super::error::ConsoleError;
use super::layout::{see_other, Page, Section};
use super::session;
use super::state::ConsoleState;
use crate::api::{authenticate_token, ApiError, Caller};
use crate::words::counted;

#[derive(Debug, Deserialize)]
pub struct SignIn {
    #[serde(default)]
    token: String,
}

#[derive(Debug, Deserialize)]
pub struct Csrf {
    #[serde(default)]
    csrf: String,
}

/// `GET /console/sign-in`.
pub async fn form() -> HttpResponse {
    page(None, StatusCode::OK)
}

/// `POST /console/sign-in`: a good token gets a session and the overview;
/// any other gets the form again with 401; an address locked out by its
/// failures gets the form with 429, the token not even looked at.
pub async fn submit(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    form: web::Form<SignIn>,
) -> Result<HttpResponse, ConsoleError> {
    if from_another_site(&request) {
        return Err(ConsoleError::Forbidden(
            "a sign-in must come from the console's own form".into(),
        ));
    }
    if let Err(retry_after) = state.sign_ins.admit(&request) {
        return Ok(locked_out(retry_after));
    }
    let given = form.token.trim();
    match authenticate_token(given, &state.store, state.bootstrap.as_deref()).await {
        Ok(caller) => {
            info!(state.log, "console sign-in"; "token" => caller.name());
            let mut response = see_other(landing(&caller));
            response
                .add_cookie(&session::start(&request, &state, given))
                .map_err(|_| ConsoleError::NotSignedIn)?;
            Ok(response)
        }
        // The database did not answer: not the caller's failure.
        Err(ApiError::Unavailable(e)) => Err(ConsoleError::Unavailable(e)),
        Err(_) => {
            if let Some(lockout) = state.sign_ins.failed(&request) {
                // Once per lockout, not per refusal: the log stays bounded.
                warn!(state.log, "console sign-ins locked out after failures";
                      "address" => request.peer_addr().map(|a| a.ip().to_string()),
                      "seconds" => lockout.as_secs());
            }
            Ok(page(
                Some("That token does not sign in: it is unknown, revoked or expired."),
                StatusCode::UNAUTHORIZED,
            ))
        }
    }
}

/// The form again, refused for `retry_after` more.
fn locked_out(retry_after: std::time::Duration) -> HttpResponse {
    // Whole seconds, rounded up: a client that waits exactly this long is
    // let in.
    let seconds = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
    let wait = if seconds > 90 {
        counted(seconds.div_ceil(60), "minute")
    } else {
        counted(seconds, "second")
    };
    let message = format!(
        "Too many failed sign-ins from your address. Sign-in from it is refused \
         for {wait} more; try again then."
    );
    let mut response = page(Some(&message), StatusCode::TOO_MANY_REQUESTS);
    response.headers_mut().insert(
        actix_web::http::header::RETRY_AFTER,
        actix_web::http::header::HeaderValue::from(seconds),
    );
    response
}

/// Where a session starts: the overview, or the task search for a token
/// limited to tenants (the overview concerns every tenant).
pub fn landing(caller: &Caller) -> &'static str {
    if caller.tenant_limited() {
        "/console/tasks"
    } else {
        "/console/overview"
    }
}

/// Whether the browser says the form was posted from another site. The
/// session cookie is SameSite=Strict, but a sign-in has no session yet:
/// without this, another site could sign a person into the console with
/// a token of its own choosing (and read what they then search for). A
/// client that sends neither header (curl, a test) is let through.
fn from_another_site(request: &HttpRequest) -> bool {
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    if let Some(site) = header("sec-fetch-site") {
        return !matches!(site.as_str(), "same-origin" | "none");
    }
    match (header("origin"), header("host")) {
        (Some(origin), Some(host)) => {
            let origin_host = origin.split_once("://").map_or("", |(_, rest)| rest);
            origin == "null" || origin_host != host
        }
        (Some(_), None) => true,
        _ => false,
    }
}

/// `POST /console/sign-out`: clears the cookie (with the session's CSRF
/// value, so another site cannot sign a person out).
pub async fn sign_out(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    form: web::Form<Csrf>,
) -> Result<HttpResponse, ConsoleError> {
    if let Ok(viewer) = session::viewer(&request, &state).await {
        viewer.check_csrf(&form.csrf)?;
    }
    let mut response = see_other("/console/sign-in");
    response
        .add_cookie(&session::end(&request, &state))
        .map_err(|_| ConsoleError::NotSignedIn)?;
    Ok(response)
}

fn page(error: Option<&str>, status: StatusCode) -> HttpResponse {
    Page {
        title: "Sign in",
        section: Section::None,
        viewer: None,
        refresh: false,
        body: html! {
            h1 { "Sign in to the remit console" }
            @if let Some(error) = error {
                p #sign-in-error role="alert" { (error) }
            }
            form #sign-in method="post" action="/console/sign-in" {
                label for="token" { "API token" }
                input #token name="token" type="password" autocomplete="current-password" required autofocus;
                button #sign-in-button type="submit" { "Sign in" }
            }
            p.hint {
                "The bootstrap token (api.token) or a token made with "
                code { "remit token create" }
                ". A read token sees everything and changes nothing; a tenant-limited token sees only its tenants' tasks."
            }
        },
    }
    .render_with(status)
}
