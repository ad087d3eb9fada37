//! The frame of every console page (head, skip link, navigation, the
//! sign-out form, `<main>`), the error pages, and small helpers that
//! every page uses. maud escapes every value it is given, so nothing a
//! receiver or a producer wrote (a reason, an error, a tenant id) can
//! become markup.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use chrono::{DateTime, Utc};
use maud::{html, Markup, DOCTYPE};
use remit::domain::DestinationId;

use super::error::ConsoleError;
use super::session::Viewer;

/// Which section of the navigation a page belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Overview,
    Destinations,
    Tasks,
    Audit,
    None,
}

/// A page as the console answers it: 200 unless said otherwise.
#[derive(Debug)]
pub struct Page<'a> {
    pub title: &'a str,
    pub section: Section,
    pub viewer: Option<&'a Viewer>,
    /// Re-fetched every few seconds by the script while set.
    pub refresh: bool,
    pub body: Markup,
}

impl Page<'_> {
    pub fn render(self) -> HttpResponse {
        self.render_with(StatusCode::OK)
    }

    pub fn render_with(self, status: StatusCode) -> HttpResponse {
        let link = |section: Section, href: &str, label: &str| {
            html! {
                @if section == self.section {
                    a href=(href) aria-current="page" { (label) }
                } @else {
                    a href=(href) { (label) }
                }
            }
        };
        let markup = html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    title { (self.title) " · remit" }
                    link rel="stylesheet" href="/console/assets/console.css";
                    script src="/console/assets/console.js" defer {}
                }
                body {
                    a.skip href="#main" { "Skip to content" }
                    header {
                        nav aria-label="Console" {
                            span.brand { "remit" }
                            @if let Some(viewer) = self.viewer {
                                (link(Section::Overview, "/console/overview", "Overview"))
                                (link(Section::Destinations, "/console/destinations", "Destinations"))
                                (link(Section::Tasks, "/console/tasks", "Tasks"))
                                @if viewer.admin() && !viewer.caller.tenant_limited() {
                                    (link(Section::Audit, "/console/audit", "Audit log"))
                                }
                                span.who { (viewer.describe()) }
                                form.sign-out method="post" action="/console/sign-out" {
                                    (viewer.csrf_input())
                                    button type="submit" { "Sign out" }
                                }
                            }
                        }
                    }
                    @if self.refresh {
                        main #main tabindex="-1" data-refresh { (self.body) }
                    } @else {
                        main #main tabindex="-1" { (self.body) }
                    }
                }
            }
        };
        HttpResponse::build(status)
            .content_type("text/html; charset=utf-8")
            .body(markup.into_string())
    }
}

/// A 303 to `to`: what a form's POST answers, so a reload does not post
/// again.
pub fn see_other(to: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header(("location", to))
        .finish()
}

/// An instant as the CLI prints it (RFC 3339, seconds, UTC), in a
/// `<time>` element.
pub fn instant(at: DateTime<Utc>) -> Markup {
    let text = crate::words::instant(at);
    html! { time datetime=(text) { (text) } }
}

/// A destination's last error and when it happened (`—` with none: it has
/// recovered, or never failed).
pub fn last_error(health: &remit::domain::DestinationHealth) -> Markup {
    match (&health.last_error, health.last_error_at) {
        (None, _) => html! { "—" },
        (Some(error), None) => html! { (error) },
        (Some(error), Some(at)) => html! { (error) br; span.hint { "at " (instant(at)) } },
    }
}

/// `active`, `paused until …` or `disabled: REASON`.
pub fn state_text(d: &remit::domain::Destination) -> String {
    if !d.enabled {
        let reason = d.health.disabled_reason.as_deref().unwrap_or("manual");
        return format!("disabled: {reason}");
    }
    match d.paused_until {
        Some(until) if until > Utc::now() => {
            format!("paused until {}", crate::words::instant(until))
        }
        _ => "active".into(),
    }
}

/// How long a reminder due at `due` has waited by `now` (`—` when none
/// waits), with the deadline in its `<time>`.
pub fn waited(due: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Markup {
    match due {
        None => html! { "—" },
        Some(due) => {
            let text = crate::words::instant(due);
            html! { time datetime=(text) title=(format!("due {text}")) { (crate::status::human(now - due)) } }
        }
    }
}

pub fn maybe_instant(at: Option<DateTime<Utc>>) -> Markup {
    match at {
        Some(at) => instant(at),
        None => html! { "—" },
    }
}

/// The error pages: what a page could not show, with the status that
/// says why.
impl ResponseError for ConsoleError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::NotSignedIn => StatusCode::SEE_OTHER,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::BadRequest { .. } => StatusCode::BAD_REQUEST,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        if let Self::NotSignedIn = self {
            return see_other("/console/sign-in");
        }
        let title = match self {
            Self::Forbidden(_) => "Not allowed",
            Self::NotFound(_) => "Not found",
            Self::Conflict(_) => "Not possible",
            Self::Unavailable(_) => "Unavailable",
            Self::Internal(_) => "Failed",
            _ => "Not understood",
        };
        Page {
            title,
            section: Section::None,
            viewer: None,
            refresh: false,
            body: html! {
                h1 { (title) }
                p #error { (self.to_string()) }
                p {
                    a href="/console/overview" { "Overview" } " · "
                    a href="/console/tasks" { "Tasks" }
                }
            },
        }
        .render_with(self.status_code())
    }
}

/// A destination's page's path for `id`: its id as one path segment, every byte but
/// the unreserved ones percent-encoded (an encoded unreserved byte would
/// not be the path's one spelling, `api::canonical_path`).
pub fn destination_path(id: &DestinationId) -> String {
    let mut path = String::from("/console/destinations/");
    for byte in id.as_str().bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            path.push(char::from(byte));
        } else {
            path.push_str(&format!("%{byte:02X}"));
        }
    }
    path
}

#[cfg(test)]
mod destination_path_tests {
    use super::*;

    #[test]
    fn an_id_is_one_segment_of_the_path() {
        let path = |id: &str| super::destination_path(&DestinationId::new(id).unwrap());
        assert_eq!(path("crm-1.eu_x~"), "/console/destinations/crm-1.eu_x~");
        assert_eq!(path("a/b c%é"), "/console/destinations/a%2Fb%20c%25%C3%A9");
        assert_eq!(
            crate::api::canonical_path::non_canonical(&path("a/b c%é")),
            None
        );
    }
}
