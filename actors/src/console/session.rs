//! The console's session: a `remit_console` cookie, sealed (AES-GCM, from
//! the `cookie` crate's private jar) so that it can be neither read nor
//! forged, holding the SHA-256 of the token that signed in (never the
//! token), when the session ends, and a random CSRF value that every form
//! carries back.
//!
//! The token is checked again on every request ([`viewer`]), exactly as
//! /v1 checks a bearer token: a revoked or expired token, or a changed
//! bootstrap token, ends its sessions at once.
//!
//! The cookie is HttpOnly, SameSite=Strict, limited to /console, and
//! Secure when the connection itself is TLS or `console.secure_cookie`
//! says a proxy ends TLS in front (a forwarded scheme header is not
//! trusted: anyone can send one).

use actix_web::cookie::{time, Cookie, CookieJar, SameSite};
use actix_web::HttpRequest;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use chrono::Utc;
use maud::{html, Markup};
use remit::domain::{token_hash, Scope, TokenHash};
use serde::{Deserialize, Serialize};

use super::error::ConsoleError;

use super::state::ConsoleState;
use crate::api::{authenticate_hash, ApiError, Caller};

pub const COOKIE: &str = "remit_console";

/// What the sealed cookie holds.
#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    /// The token's SHA-256, base64url.
    token: String,
    /// When the session ends, in Unix milliseconds.
    expires: i64,
    /// The value every form must carry back.
    csrf: String,
}

/// Who is looking at a page, checked for this request.
#[derive(Debug, Clone)]
pub struct Viewer {
    pub caller: Caller,
    csrf: String,
}

impl Viewer {
    /// Whether it may act (enable, disable, rotate, replay).
    pub fn admin(&self) -> bool {
        self.caller.scope() == Scope::Admin
    }

    /// Refuses an action to a token that may only look.
    pub fn may_act(&self) -> Result<(), ConsoleError> {
        if self.admin() {
            Ok(())
        } else {
            Err(ConsoleError::may_not_act())
        }
    }

    /// Refuses a page that concerns every tenant to a tenant-limited token.
    pub fn sees_every_tenant(&self) -> Result<(), ConsoleError> {
        if self.caller.tenant_limited() {
            Err(ConsoleError::Forbidden(
                "this token is limited to tenants; this page concerns every tenant (the Tasks page shows yours)"
                    .into(),
            ))
        } else {
            Ok(())
        }
    }

    /// Refuses a POST whose form did not carry the session's CSRF value.
    pub fn check_csrf(&self, given: &str) -> Result<(), ConsoleError> {
        if crate::api::constant_time_eq(given.as_bytes(), self.csrf.as_bytes()) {
            Ok(())
        } else {
            Err(ConsoleError::Forbidden(
                "the form's CSRF value is missing or stale; reload the page and try again".into(),
            ))
        }
    }

    /// The hidden input every form carries.
    pub fn csrf_input(&self) -> Markup {
        html! { input type="hidden" name="csrf" value=(self.csrf); }
    }

    /// Who acted, for the log: a token id, or `bootstrap`.
    pub fn caller_name(&self) -> String {
        self.caller.name()
    }

    /// Who is signed in, as the navigation shows it.
    pub fn describe(&self) -> String {
        match &self.caller {
            Caller::Bootstrap => "bootstrap token (admin)".into(),
            Caller::Token(token) => {
                let name = token.name.as_deref().unwrap_or("token");
                let tenants = match &token.tenants {
                    Some(tenants) => format!(
                        ", tenants {}",
                        tenants
                            .iter()
                            .map(|t| t.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    None => String::new(),
                };
                format!("{name} ({}{tenants})", token.scope)
            }
        }
    }
}

/// Who the request's session is, checked now; [`ConsoleError::NotSignedIn`]
/// when there is no session, it has ended, or its token no longer signs in.
pub async fn viewer(request: &HttpRequest, state: &ConsoleState) -> Result<Viewer, ConsoleError> {
    let claims = open(request, state).ok_or(ConsoleError::NotSignedIn)?;
    if claims.expires <= Utc::now().timestamp_millis() {
        return Err(ConsoleError::NotSignedIn);
    }
    let hash: TokenHash = URL_SAFE_NO_PAD
        .decode(&claims.token)
        .ok()
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or(ConsoleError::NotSignedIn)?;
    let caller = authenticate_hash(&hash, &state.store, state.bootstrap.as_deref())
        .await
        .map_err(|e| match e {
            ApiError::Unavailable(e) => ConsoleError::Unavailable(e),
            _ => ConsoleError::NotSignedIn,
        })?;
    Ok(Viewer {
        caller,
        csrf: claims.csrf,
    })
}

/// The cookie that starts a session for `token` (already checked).
pub fn start(request: &HttpRequest, state: &ConsoleState, token: &str) -> Cookie<'static> {
    let claims = Claims {
        token: URL_SAFE_NO_PAD.encode(token_hash(token)),
        expires: (Utc::now() + state.session).timestamp_millis(),
        csrf: URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>()),
    };
    let value = serde_json::to_string(&claims).unwrap_or_default();
    let mut jar = CookieJar::new();
    jar.private_mut(&state.key).add(Cookie::new(COOKIE, value));
    let mut cookie = jar
        .get(COOKIE)
        .cloned()
        .unwrap_or_else(|| Cookie::new(COOKIE, ""));
    shape(&mut cookie, request, state);
    cookie.set_max_age(time::Duration::seconds(state.session.num_seconds()));
    cookie
}

/// The cookie that ends the session in the browser.
pub fn end(request: &HttpRequest, state: &ConsoleState) -> Cookie<'static> {
    let mut cookie = Cookie::new(COOKIE, "");
    shape(&mut cookie, request, state);
    cookie.make_removal();
    cookie
}

fn shape(cookie: &mut Cookie<'static>, request: &HttpRequest, state: &ConsoleState) {
    cookie.set_http_only(true);
    cookie.set_same_site(SameSite::Strict);
    cookie.set_path("/console");
    // The connection's own scheme is TLS only on a TLS listener; behind a
    // proxy that ends TLS, only the operator knows, and says so.
    cookie.set_secure(state.secure_cookie || request.app_config().secure());
}

fn open(request: &HttpRequest, state: &ConsoleState) -> Option<Claims> {
    let sealed = request.cookie(COOKIE)?;
    let mut jar = CookieJar::new();
    jar.add_original(sealed);
    let opened = jar.private(&state.key).get(COOKIE)?;
    serde_json::from_str(opened.value()).ok()
}
