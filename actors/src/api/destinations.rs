//! /v1/destinations: register and inspect receivers (their change and
//! deletion are `destination_settings`).

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use remit::domain::{
    CustomHeader, Destination, DestinationId, DisableOverrides, HeaderValue, NewDestination, Region,
};
use remit::store::Destinations;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::body::{optional_whole, read_object};
use super::caller::Admin;
use super::error::ApiError;
use super::error::ErrorBody;
use super::state::ApiState;
use crate::signature;

/// A receiver of webhooks.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "id": "crm", "region": "us", "url": "https://hooks.example.com/remit",
    "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
}))]
pub struct CreateDestination {
    /// Not blank, at most 200 bytes (UTF-8), no control characters.
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"
    )]
    id: String,
    /// Only this region's processes send to it: a lowercase letter, then
    /// up to 31 lowercase letters, digits or `-`. This process's region,
    /// unless it accepts writes for other regions.
    #[schema(pattern = r"^[a-z][a-z0-9-]{0,31}$", max_length = 32)]
    region: String,
    /// Absolute `http` or `https` URL with a host and no credentials
    /// (`user:password@`); refused addresses and plain `http` are refused
    /// unless allowlisted.
    #[schema(format = "uri")]
    url: String,
    /// `whsec_` followed by standard base64 (padded) of 24 to 64 bytes;
    /// webhooks are signed when present.
    #[schema(
        pattern = r"^whsec_(?:(?:[A-Za-z0-9+/]{4}){8,20}(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?|(?:[A-Za-z0-9+/]{4}){21}(?:[A-Za-z0-9+/][AQgw]==)?)$"
    )]
    secret: Option<String>,
    /// This destination's own time a failure streak must last before it is
    /// disabled, in seconds (0 to 316224000); the runtime's
    /// `destinations.disable_after_seconds` when absent.
    #[schema(minimum = 0, maximum = 316224000)]
    #[serde(default, deserialize_with = "optional_whole")]
    disable_after_seconds: Option<i64>,
    /// This destination's own number of failed attempts a streak must
    /// reach before it is disabled (at least 1); the runtime's
    /// `destinations.disable_after_failures` when absent.
    #[schema(minimum = 1, maximum = 2147483647)]
    #[serde(default, deserialize_with = "optional_whole")]
    disable_after_failures: Option<u32>,
}

impl CreateDestination {
    /// A request from the command line's flags.
    pub fn from_parts(id: String, region: String, url: String, secret: Option<String>) -> Self {
        Self {
            id,
            region,
            url,
            secret,
            disable_after_seconds: None,
            disable_after_failures: None,
        }
    }

    /// The same request with the destination's own disable thresholds.
    pub fn with_thresholds(self, after_seconds: Option<i64>, failures: Option<u32>) -> Self {
        Self {
            disable_after_seconds: after_seconds,
            disable_after_failures: failures,
            ..self
        }
    }

    pub fn validate(self) -> Result<NewDestination, remit::domain::InvalidInput> {
        let region: Region = self.region.parse()?;
        if let Some(secret) = &self.secret {
            signature::secret_key(secret)
                .map_err(|e| remit::domain::InvalidInput::new("secret", e.to_string()))?;
        }
        // The request calls it `id`; errors name the field as sent.
        let id = DestinationId::new(&self.id)
            .map_err(|e| remit::domain::InvalidInput::new("id", e.reason))?;
        let overrides =
            DisableOverrides::new(self.disable_after_seconds, self.disable_after_failures)?;
        Ok(NewDestination::new(id, region, &self.url, self.secret)?.with_overrides(overrides))
    }
}

/// Register a receiver
///
/// The same registration again answers 200 with the stored destination;
/// the same `id` with another `region`, `url`, `secret` or thresholds
/// answers 409, naming the fields that differ.
#[utoipa::path(
    post,
    path = "/v1/destinations",
    operation_id = "create_destination",
    tag = "destinations",
    request_body = CreateDestination,
    responses(
        (status = 201, description = "Registered: the stored destination", body = DestinationView),
        (status = 200, description = "Registered before with the same settings", body = DestinationView),
        (status = 400, description = "The body is not the JSON this endpoint takes", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 409, description = "The id exists with another region, url or secret", body = ErrorBody),
        (status = 413, description = "The body is over its limit", body = ErrorBody),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    body: web::Json<Box<RawValue>>,
) -> Result<HttpResponse, ApiError> {
    // The bearer token has been checked before the body was read (see
    // `auth::require_token`).
    let new = read_object::<CreateDestination>(body.get())?.validate()?;
    let rules = &state.rules;
    if new.region != rules.serving && !rules.allow_other_regions {
        return Err(ApiError::Invalid(remit::domain::InvalidInput::new(
            "region",
            format!(
                "this process serves region {}; destinations for {} are registered through that region's process",
                remit::domain::quoted(rules.serving.as_str()),
                remit::domain::quoted(new.region.as_str())
            ),
        )));
    }
    state.egress.admit(&new.url).await?;
    // A repeat answers 200 as a repeated task does; two first
    // registrations racing may both answer 201, which is harmless.
    let existed = state.store.destination(&new.id).await?.is_some();
    let destination = state.acting(&caller).add_destination(new).await?;
    let view = DestinationView::from(&destination);
    Ok(if existed {
        HttpResponse::Ok().json(view)
    } else {
        HttpResponse::Created().json(view)
    })
}

/// Read a destination
///
/// Another region's destination is answered like a missing one.
#[utoipa::path(
    get,
    path = "/v1/destinations/{id}",
    operation_id = "get_destination",
    tag = "destinations",
    params((
        "id" = String,
        Path,
        description = "The destination's id: not blank, at most 200 bytes (UTF-8), no control characters",
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$",
    )),
    responses(
        (status = 200, description = "The destination", body = DestinationView,
            headers(("etag" = String, description = "The version of its settings, for `If-Match` on a change"))),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "No such destination in this region", body = ErrorBody),
        (status = 422, description = "Not a valid destination id", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<ApiState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = DestinationId::new(&id)?;
    let destination = state
        .store
        .destination(&id)
        .await?
        .filter(|d| d.region == state.rules.serving)
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "no destination {}",
                remit::domain::quoted(id.as_str())
            ))
        })?;
    Ok(HttpResponse::Ok()
        .insert_header(etag(&destination))
        .json(DestinationView::from(&destination)))
}

/// The `ETag` of a destination: the version of what a change may change.
pub(super) fn etag(destination: &remit::domain::Destination) -> (&'static str, String) {
    ("etag", format!("\"{}\"", destination.settings_tag()))
}

/// The version an `If-Match` header names, if the request has one: the
/// tag inside a strong entity tag's quotes, or the whole value (a tag
/// sent without its quotes is taken as it is; a weak tag, a list or
/// anything else matches no version: 412, as RFC 9110's strong comparison
/// has it); `*` matches any version, as no header would.
pub(super) fn if_match(request: &actix_web::HttpRequest) -> Option<String> {
    let value = request.headers().get("if-match")?;
    let text = String::from_utf8_lossy(value.as_bytes()).trim().to_owned();
    if text == "*" {
        return None;
    }
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(inner) if !inner.is_empty() && !inner.contains('"') => Some(inner.to_owned()),
        _ => Some(text),
    }
}

macro_rules! destination_view {
    ([{ $($before:tt)* } { $($after:tt)* }]
     $($name:ident: $ty:ident = $least:tt ..= $most:tt, $label:literal, $doc:literal;)*) => {
        /// A stored destination, never its secret.
        #[derive(Debug, Default, Serialize, ToSchema)]
        #[schema(example = json!({
            "id": "crm", "region": "us", "url": "https://hooks.example.com/remit",
            "has_signing_secret": true, "enabled": true, "paused_until": null,
            "disabled_reason": null, "disabled_at": null, "last_error": "status 503",
            "last_error_at": "2026-12-24T03:12:09Z", "failure_streak": 2,
            "failure_streak_since": "2026-12-24T03:11:40Z",
            "disable_after_seconds": null, "disable_after_failures": null,
            "rate_per_second": 5.0, "burst": null, "max_in_flight": null, "timeout_ms": 5000,
            "max_attempts": null, "retry_horizon_seconds": null, "late_after_seconds": 3600,
            "headers": [{"name": "authorization", "value": null, "secret": true, "hint": "9f3a"}]
        }))]
        pub struct DestinationView {
            $($before)*
            $(
                #[doc = $doc]
                #[doc = ""]
                #[doc = "Its own (`PATCH /v1/destinations/{id}`); `null` takes the runtime's (the configuration's entry for it, else its default)."]
                #[schema(required = true)]
                pub $name: Option<$ty>,
            )*
            $($after)*
        }

        impl DestinationView {
            fn with_settings(mut self, s: &remit::domain::DestinationSettings) -> Self {
                $(self.$name = s.$name;)*
                self
            }
        }
    };
}

// The view's fields before the settings, then after them.
remit::destination_settings!(destination_view {
    pub id: String,
    pub region: String,
    /// The URL as parsed (`https://hooks.example.com` becomes
    /// `https://hooks.example.com/`).
    #[schema(format = "uri")]
    pub url: String,
    pub has_signing_secret: bool,
    pub enabled: bool,
    /// The end of the latest pause a receiver asked for (a 429, or a 503
    /// with Retry-After), or `null` if there never was one; it stays set
    /// after the pause has ended.
    #[schema(required = true)]
    pub paused_until: Option<DateTime<Utc>>,
    /// Why it is disabled: `auto: N failures in a row over 12 minutes`
    /// (the streak's length in seconds, minutes, hours or days) when a
    /// failure streak disabled it, the operator's reason (or `manual`)
    /// when disabled by hand; `null` while enabled.
    #[schema(required = true)]
    pub disabled_reason: Option<String>,
    /// When it was disabled; `null` while enabled.
    #[schema(required = true)]
    pub disabled_at: Option<DateTime<Utc>>,
    /// The last failed attempt's status (`status 500`) or transport error
    /// kind (`transport: timeout`); never anything the receiver sent.
    /// `null` once a success has come after it (the destination recovered).
    #[schema(required = true)]
    pub last_error: Option<String>,
    /// When that attempt ended; `null` with no last error (or for one kept
    /// from before remit recorded the time).
    #[schema(required = true)]
    pub last_error_at: Option<DateTime<Utc>>,
    /// Attempts failed since the last success.
    pub failure_streak: u32,
    /// When the first of them ended; `null` with no streak.
    #[schema(required = true)]
    pub failure_streak_since: Option<DateTime<Utc>>,
    /// Its own thresholds; `null` takes the runtime's.
    #[schema(required = true)]
    pub disable_after_seconds: Option<i64>,
    #[schema(required = true)]
    pub disable_after_failures: Option<u32>,
} {
    /// Its custom headers, in the order sent; a secret's value is never
    /// shown.
    pub headers: Vec<HeaderView>,
});

/// A custom header as shown back.
#[derive(Debug, Serialize, ToSchema)]
pub struct HeaderView {
    pub name: String,
    /// The value; `null` for a secret.
    #[schema(required = true)]
    pub value: Option<String>,
    pub secret: bool,
    /// A secret's last four characters when it has 16 or more; `null`
    /// otherwise.
    #[schema(required = true)]
    pub hint: Option<String>,
}

impl From<&CustomHeader> for HeaderView {
    fn from(h: &CustomHeader) -> Self {
        let (value, secret, hint) = match &h.value {
            HeaderValue::Plain(v) => (Some(v.clone()), false, None),
            HeaderValue::Secret { hint, .. } => (None, true, hint.clone()),
        };
        Self {
            name: h.name.clone(),
            value,
            secret,
            hint,
        }
    }
}

impl From<&Destination> for DestinationView {
    fn from(d: &Destination) -> Self {
        Self {
            id: d.id.as_str().to_owned(),
            region: d.region.as_str().to_owned(),
            url: d.url.as_str().to_owned(),
            has_signing_secret: d.has_signing_secret,
            enabled: d.enabled,
            paused_until: d.paused_until,
            disabled_reason: d.health.disabled_reason.clone(),
            disabled_at: d.health.disabled_at,
            last_error: d.health.last_error.clone(),
            last_error_at: d.health.last_error_at,
            failure_streak: d.health.failure_streak,
            failure_streak_since: d.health.failure_streak_since,
            disable_after_seconds: d.health.overrides.after_seconds,
            disable_after_failures: d.health.overrides.failures,
            headers: d.settings.headers.iter().map(HeaderView::from).collect(),
            ..Self::default()
        }
        .with_settings(&d.settings)
    }
}
