//! `PATCH /v1/destinations/{id}` and `DELETE /v1/destinations/{id}`: an
//! operator changes a destination's URL and its own settings (limits, send
//! timeout, retry policy, lateness allowance, disable thresholds, custom
//! headers) without a restart, or deletes it.

use actix_web::{web, HttpResponse};
use remit::domain::{
    checked_url, quoted, CustomHeader, DestinationChange, DestinationId, InvalidInput, Setting,
    MAX_HEADERS,
};
use remit::store::{Destinations, JobAction, JobFilter, NewJob};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::body::{read_object, settable_whole, setting};
use super::caller::Admin;
use super::destinations::DestinationView;
use super::error::ApiError;
use super::error::ErrorBody;
use super::replays::JobView;
use super::state::ApiState;

macro_rules! change_destination {
    ([{ $($before:tt)* } { $($after:tt)* }]
     $($name:ident: $ty:ident = $least:tt ..= $most:tt, $label:literal, $doc:literal;)*) => {
        /// What to change. A field left out keeps its value; `null` gives
        /// the setting back to the runtime (the configuration's entry for
        /// the destination, else its default).
        #[derive(Debug, Default, Deserialize, ToSchema)]
        #[serde(deny_unknown_fields)]
        #[schema(example = json!({
            "rate_per_second": 5, "burst": 10, "timeout_ms": 5000,
            "headers": [{"name": "Authorization", "value": "Bearer 3c1f…", "secret": true}]
        }))]
        pub struct ChangeDestination {
            $($before)*
            $(
                #[doc = $doc]
                #[schema(value_type = Option<$ty>, minimum = $least, maximum = $most)]
                #[serde(default, deserialize_with = "setting")]
                $name: Setting<$ty>,
            )*
            $($after)*
        }

        impl ChangeDestination {
            /// Its settings into `change`.
            fn settings_into(&self, change: &mut DestinationChange) {
                $(change.$name = self.$name;)*
            }
        }
    };
}

// The change's fields before the settings, then after them.
remit::destination_settings!(change_destination {
    /// A new URL: absolute `http` or `https` with a host and no
    /// credentials, admitted by the address policy as at registration.
    #[schema(format = "uri")]
    url: Option<String>,
} {
    /// How long a failure streak must last before it is disabled, in
    /// seconds: 0 to 316224000.
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 316224000)]
    #[serde(default, deserialize_with = "settable_whole")]
    disable_after_seconds: Setting<i64>,
    /// How many failed attempts a streak must reach before it is disabled:
    /// 1 to 2147483647.
    #[schema(value_type = Option<u32>, minimum = 1, maximum = 2147483647)]
    #[serde(default, deserialize_with = "settable_whole")]
    disable_after_failures: Setting<u32>,
    /// Every custom header, in the order sent; replaces those it has
    /// (`[]` or `null`: none). At most 20.
    #[schema(max_items = 20)]
    #[serde(default, deserialize_with = "headers_or_none")]
    headers: Option<Vec<HeaderInput>>,
});

/// A header sent with every request to the destination.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HeaderInput {
    /// An HTTP header name (letters, digits and ``!#$%&'*+-.^_`|~``), at
    /// most 100 characters, kept lowercase; not one remit sets itself
    /// (`content-type`, `webhook-signature`, `idempotency-key`, …).
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$"
    )]
    name: String,
    /// At most 4096 bytes of visible ASCII, spaces and tabs. A secret's may
    /// be left out to keep the value stored under its name.
    #[schema(max_length = 4096, pattern = r"^[\x20-\x7e\t]*$")]
    value: Option<String>,
    /// Sealed at rest and never shown back (only its last four characters
    /// when it has 16 or more).
    #[serde(default)]
    secret: bool,
}

/// `headers` present: `null` is none at all.
fn headers_or_none<'de, D>(deserializer: D) -> Result<Option<Vec<HeaderInput>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Ok(Some(
        Option::<Vec<HeaderInput>>::deserialize(deserializer)?.unwrap_or_default(),
    ))
}

impl ChangeDestination {
    /// The change, each value checked, naming its field.
    pub fn validate(self) -> Result<DestinationChange, InvalidInput> {
        let mut change = DestinationChange {
            disable_after_seconds: self.disable_after_seconds,
            disable_after_failures: self.disable_after_failures,
            ..DestinationChange::default()
        };
        self.settings_into(&mut change);
        change.headers = match self.headers {
            None => None,
            Some(asked) if asked.len() > MAX_HEADERS => {
                return Err(InvalidInput::new(
                    "headers",
                    format!("at most {MAX_HEADERS} headers"),
                ))
            }
            Some(asked) => Some(
                asked
                    .into_iter()
                    .enumerate()
                    .map(|(i, h)| CustomHeader::new(i, &h.name, h.value, h.secret))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        change.url = self.url.as_deref().map(checked_url).transpose()?;
        change.validate()?;
        Ok(change)
    }
}

/// Change a destination's URL or settings
///
/// Takes effect in every process of the region within about a second (a
/// throttle already holding tasks included); what a setting left out had
/// stays. Answers the destination as it now is. With `If-Match` (the
/// `ETag` a read gave), the change is refused (412) if the destination's
/// settings changed since, so an editor never undoes a change it did not
/// see.
#[utoipa::path(
    patch,
    path = "/v1/destinations/{id}",
    operation_id = "update_destination",
    tag = "destinations",
    params(("id" = String, Path, description = "The destination's id", min_length = 1, max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"),
        ("if-match" = Option<String>, Header, nullable = false,
            description = "The `ETag` of the destination as last read: the change is refused (412) if the destination changed since; a weak tag never matches")),
    request_body = ChangeDestination,
    responses(
        (status = 200, description = "Changed: the destination as it now is", body = DestinationView,
            headers(("etag" = String, description = "The version of its settings now"))),
        (status = 400, description = "The body is not the JSON this endpoint takes", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope is not admin", body = ErrorBody),
        (status = 404, description = "No such destination in this region", body = ErrorBody),
        (status = 412, description = "`If-Match` names a version the destination no longer has: read it again", body = ErrorBody),
        (status = 413, description = "The body is over its limit", body = ErrorBody),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn update(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    id: web::Path<String>,
    request: actix_web::HttpRequest,
    body: web::Json<Box<serde_json::value::RawValue>>,
) -> Result<HttpResponse, ApiError> {
    let id = DestinationId::new(&id)?;
    let mut change = read_object::<ChangeDestination>(body.get())?.validate()?;
    change.if_match = super::destinations::if_match(&request);
    if let Setting::Set(ms) = change.timeout_ms {
        let most = state.progress.lease.as_millis() / 2;
        if u128::from(ms) > most {
            return Err(ApiError::Invalid(InvalidInput::new(
                "timeout_ms",
                format!("must be at most half the lease ({most} ms), so the finish fits in it"),
            )));
        }
    }
    served(&state, &id).await?;
    if let Some(url) = &change.url {
        state.egress.admit(url).await?;
    }
    let destination = state
        .acting(&caller)
        .update_destination(&id, change)
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header(super::destinations::etag(&destination))
        .json(DestinationView::from(&destination)))
}

/// `?cancel_tasks=true`: delete the destination with its live tasks.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeleteParams {
    /// Cancel its tasks that have not ended (a bulk cancel, recorded with
    /// the deletion) rather than refusing while it has any.
    #[serde(default)]
    cancel_tasks: bool,
}

/// What a deletion did.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeletedView {
    /// The destination as it was.
    pub destination: DestinationView,
    /// Its tasks that had not ended.
    pub live_tasks: u64,
    /// The bulk cancel of those tasks (`GET /v1/replays/{id}` follows it);
    /// `null` when there were none.
    #[schema(required = true)]
    pub cancel_job: Option<JobView>,
}

/// Delete a destination
///
/// Refused (409) while it has tasks that have not ended, unless
/// `cancel_tasks=true`: then they are cancelled with it (a task in flight
/// after its attempt). Nothing is sent to it from then on, it is no longer
/// shown, and tasks for it are refused as for an unknown destination; its
/// ended tasks keep their history until retention prunes them.
/// Registering its id again makes a new destination.
#[utoipa::path(
    delete,
    path = "/v1/destinations/{id}",
    operation_id = "delete_destination",
    tag = "destinations",
    params(("id" = String, Path, description = "The destination's id", min_length = 1, max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"),
        DeleteParams),
    responses(
        (status = 200, description = "Deleted", body = DeletedView),
        (status = 400, description = "A query parameter is not one this endpoint takes", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope is not admin", body = ErrorBody),
        (status = 404, description = "No such destination in this region", body = ErrorBody),
        (status = 409, description = "It has tasks that have not ended", body = ErrorBody),
        (status = 422, description = "Not a valid destination id", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn delete(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    id: web::Path<String>,
    params: web::Query<DeleteParams>,
) -> Result<HttpResponse, ApiError> {
    let id = DestinationId::new(&id)?;
    served(&state, &id).await?;
    let cancel = params.cancel_tasks.then(|| NewJob {
        region: state.rules.serving,
        action: JobAction::Cancel,
        filter: JobFilter {
            destination: Some(id.clone()),
            ..JobFilter::default()
        },
        requested_by: caller.name(),
        horizon: state.rules.horizon,
    });
    let deleted = state
        .acting(&caller)
        .delete_destination(&id, cancel)
        .await
        .map_err(|e| e.with_remedy("add ?cancel_tasks=true to cancel them with it"))?;
    Ok(HttpResponse::Ok().json(DeletedView {
        destination: DestinationView::from(&deleted.destination),
        live_tasks: deleted.live_tasks,
        cancel_job: deleted.cancel_job.as_ref().map(JobView::from),
    }))
}

/// Refuses a destination this process's region does not serve, as one
/// that does not exist.
async fn served(state: &ApiState, id: &DestinationId) -> Result<(), ApiError> {
    match state.store.destination(id).await? {
        Some(d) if d.region == state.rules.serving => Ok(()),
        _ => Err(ApiError::NotFound(format!(
            "no destination {}",
            quoted(id.as_str())
        ))),
    }
}
