//! /v1/destinations/{id}/secrets: rotate a destination's signing secret
//! without a gap, and list its secrets (never their values).

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use remit::domain::{DestinationId, InvalidInput, Rotation, SigningSecret};
use remit::store::Destinations;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::body::read_object;
use super::caller::Admin;
use super::error::ApiError;
use super::error::ErrorBody;
use super::state::ApiState;
use crate::signature;

/// A rotation. `{}` has remit generate the new secret.
#[derive(Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"old_expires_at": "2026-12-06T12:00:00Z"}))]
pub struct RotateSecret {
    /// The new secret: `whsec_` followed by standard base64 (padded) of 24
    /// to 64 bytes. Absent: remit generates one and returns it, once.
    #[schema(
        pattern = r"^whsec_(?:(?:[A-Za-z0-9+/]{4}){8,20}(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?|(?:[A-Za-z0-9+/]{4}){21}(?:[A-Za-z0-9+/][AQgw]==)?)$"
    )]
    secret: Option<String>,
    /// When the secrets valid until now stop signing (RFC 3339); not more
    /// than a minute in the past. Default: 24 hours from now. A secret
    /// that ends sooner keeps its end.
    #[schema(format = "date-time")]
    old_expires_at: Option<String>,
}

impl std::fmt::Debug for RotateSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RotateSecret")
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .field("old_expires_at", &self.old_expires_at)
            .finish()
    }
}

/// A checked rotation, and whether remit made up its secret (then the
/// answer shows it, once).
#[derive(Debug)]
pub struct CheckedRotation {
    pub rotation: Rotation,
    pub generated: bool,
}

impl RotateSecret {
    /// A request from the command line's flags.
    pub fn from_parts(secret: Option<String>, old_expires_at: Option<String>) -> Self {
        Self {
            secret,
            old_expires_at,
        }
    }

    pub fn validate(self, now: DateTime<Utc>) -> Result<CheckedRotation, InvalidInput> {
        if let Some(secret) = &self.secret {
            signature::secret_key(secret)
                .map_err(|e| InvalidInput::new("secret", e.to_string()))?;
        }
        let old_expires_at = self
            .old_expires_at
            .as_deref()
            .map(|text| {
                DateTime::parse_from_rfc3339(text.trim())
                    .map(|at| at.with_timezone(&Utc))
                    .map_err(|_| {
                        InvalidInput::new(
                            "old_expires_at",
                            "must be an RFC 3339 instant such as 2026-12-06T12:00:00Z",
                        )
                    })
            })
            .transpose()?;
        let generated = self.secret.is_none();
        let secret = self.secret.unwrap_or_else(signature::generate_secret);
        Ok(CheckedRotation {
            rotation: Rotation::new(secret, old_expires_at, now)?,
            generated,
        })
    }
}

/// One signing secret, without its value.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "5f0c6f0e-8f4a-4a4e-9d55-0d8f7f0c2b1a",
    "created_at": "2026-12-05T12:00:00Z", "expires_at": null
}))]
pub struct SecretView {
    pub id: String,
    pub created_at: DateTime<Utc>,
    /// When it stops signing; `null` for never.
    #[schema(required = true)]
    pub expires_at: Option<DateTime<Utc>>,
}

impl From<&SigningSecret> for SecretView {
    fn from(s: &SigningSecret) -> Self {
        Self {
            id: s.id.clone(),
            created_at: s.created_at,
            expires_at: s.expires_at,
        }
    }
}

/// The new secret; its value only when remit generated it.
#[derive(Serialize, ToSchema)]
pub struct RotatedView {
    #[serde(flatten)]
    pub stored: SecretView,
    /// The generated secret, shown this once; absent when the request
    /// gave its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl std::fmt::Debug for RotatedView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RotatedView")
            .field("stored", &self.stored)
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// A destination's secrets, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct SecretsView {
    pub secrets: Vec<SecretView>,
}

/// Rotate a destination's signing secret
///
/// Adds a secret; every secret valid until now keeps signing until
/// `old_expires_at`, so while both are valid each webhook carries one
/// signature per secret in `webhook-signature`.
#[utoipa::path(
    post,
    path = "/v1/destinations/{id}/secrets",
    operation_id = "rotate_destination_secret",
    tag = "destinations",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The destination's id", min_length = 1, max_length = 200)),
    request_body = RotateSecret,
    responses(
        (status = 201, description = "Added: the new secret, with its value when remit generated it", body = RotatedView),
        (status = 400, description = "The body is not the JSON this endpoint takes", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "No such destination in this region", body = ErrorBody),
        (status = 413, description = "The body is over its limit", body = ErrorBody),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn rotate(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    id: web::Path<String>,
    body: web::Json<Box<RawValue>>,
) -> Result<HttpResponse, ApiError> {
    let id = in_region(&state, &id).await?;
    let checked = read_object::<RotateSecret>(body.get())?.validate(Utc::now())?;
    let stored = state
        .acting(&caller)
        .rotate_secret(&id, checked.rotation.clone())
        .await?;
    let view = RotatedView {
        stored: SecretView::from(&stored),
        secret: checked.generated.then_some(checked.rotation.secret),
    };
    Ok(HttpResponse::Created().json(view))
}

/// List a destination's signing secrets
///
/// Ended ones included, oldest first; never their values.
#[utoipa::path(
    get,
    path = "/v1/destinations/{id}/secrets",
    operation_id = "list_destination_secrets",
    tag = "destinations",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The destination's id", min_length = 1, max_length = 200)),
    responses(
        (status = 200, description = "The secrets", body = SecretsView),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "No such destination in this region", body = ErrorBody),
        (status = 422, description = "Not a valid destination id", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn list(
    state: web::Data<ApiState>,
    _admin: Admin,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = in_region(&state, &id).await?;
    let secrets = state.store.signing_secrets(&id).await?;
    Ok(HttpResponse::Ok().json(SecretsView {
        secrets: secrets.iter().map(SecretView::from).collect(),
    }))
}

/// The destination, when it exists in this process's region; another
/// region's is answered like a missing one.
async fn in_region(state: &ApiState, id: &str) -> Result<DestinationId, ApiError> {
    let id = DestinationId::new(id)?;
    state
        .store
        .destination(&id)
        .await?
        .filter(|d| d.region == state.rules.serving)
        .map(|d| d.id)
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "no destination {}",
                remit::domain::quoted(id.as_str())
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap()
    }

    #[test]
    fn an_empty_body_generates_a_secret_and_a_day_of_overlap() {
        let checked = RotateSecret::default().validate(now()).unwrap();
        assert!(checked.generated);
        assert!(signature::secret_key(&checked.rotation.secret).is_ok());
        assert_eq!(
            checked.rotation.old_expires_at,
            now() + chrono::Duration::hours(24)
        );
    }

    #[test]
    fn refusals_name_the_field_and_never_the_secret() {
        let bad = RotateSecret::from_parts(Some("whsec_short".into()), None);
        let refused = bad.validate(now()).unwrap_err();
        assert_eq!(refused.field, "secret");
        assert!(!refused.reason.contains("short"));
        for when in ["tomorrow", "2026-12-06", "2020-01-01T00:00:00Z"] {
            let bad = RotateSecret::from_parts(None, Some(when.into()));
            assert_eq!(bad.validate(now()).unwrap_err().field, "old_expires_at");
        }
        let given = signature::generate_secret();
        let ok = RotateSecret::from_parts(Some(given.clone()), Some("2027-02-01T00:00:00Z".into()))
            .validate(now())
            .unwrap();
        assert!(!ok.generated);
        assert_eq!(ok.rotation.secret, given);
        let asked = RotateSecret::from_parts(Some(given.clone()), None);
        assert!(!format!("{asked:?} {ok:?}").contains(&given));
    }
}
