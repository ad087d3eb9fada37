//! Signing in with an API token (the bootstrap token or one made with
//! `remit token create`), checked exactly as /v1 checks a bearer token,
//! and signing out.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use maud::html;
use serde::Deserialize;
use slog::info;

use super::layout::{see_other, Page, Section};
use super::{session, ConsoleError, ConsoleState};
use crate::api::{authenticate_token, ApiError, Caller};

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
/// any other gets the form again with 401.
pub async fn submit(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    form: web::Form<SignIn>,
) -> Result<HttpResponse, ConsoleError> {
    let given = form.token.trim();
    match authenticate_token(given, &state.store, state.bootstrap.as_deref()).await {
        Ok(caller) => {
            let who = match &caller {
                Caller::Bootstrap => "bootstrap".to_owned(),
                Caller::Token(token) => token.id.to_string(),
            };
            info!(state.log, "console sign-in"; "token" => who);
            let mut response = see_other("/console/overview");
            response
                .add_cookie(&session::start(&request, &state, given))
                .map_err(|_| ConsoleError::NotSignedIn)?;
            Ok(response)
        }
        Err(ApiError::Unavailable(e)) => Err(ConsoleError::Unavailable(e)),
        Err(_) => Ok(page(
            Some("That token does not sign in: it is unknown, revoked or expired."),
            StatusCode::UNAUTHORIZED,
        )),
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
        .add_cookie(&session::end(&request))
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
