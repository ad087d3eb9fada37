//! /v1/destinations: register and inspect receivers.

use actix_web::{web, HttpResponse};
use remit::domain::{Destination, DestinationId, NewDestination, Region};
use remit::store::Store;
use serde::Deserialize;
use serde_json::json;

use super::{ApiError, ApiState};
use crate::signature;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateDestination {
    id: String,
    region: String,
    url: String,
    /// `whsec_<base64>`; webhooks are signed when present.
    secret: Option<String>,
}

impl CreateDestination {
    /// A request from the command line's flags.
    pub fn from_parts(id: String, region: String, url: String, secret: Option<String>) -> Self {
        Self {
            id,
            region,
            url,
            secret,
        }
    }

    pub fn validate(self) -> Result<NewDestination, remit::domain::InvalidInput> {
        let region: Region = self.region.parse()?;
        if let Some(secret) = &self.secret {
            signature::secret_key(secret)
                .map_err(|e| remit::domain::InvalidInput::new("secret", e.to_string()))?;
        }
        NewDestination::new(
            DestinationId::new(&self.id)?,
            region,
            &self.url,
            self.secret,
        )
    }
}

/// The bearer token has been checked before the body is read (see
/// `auth::require_token`).
pub async fn create(
    state: web::Data<ApiState>,
    body: web::Json<CreateDestination>,
) -> Result<HttpResponse, ApiError> {
    let new = body.into_inner().validate()?;
    state.egress.admit(&new.url).await?;
    let destination = state.store.add_destination(new).await?;
    Ok(HttpResponse::Created().json(destination_json(&destination)))
}

/// Only this process's region's destinations: another region's is answered
/// like a missing one.
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
        .ok_or_else(|| ApiError::NotFound(format!("no destination {:?}", id.as_str())))?;
    Ok(HttpResponse::Ok().json(destination_json(&destination)))
}

fn destination_json(d: &Destination) -> serde_json::Value {
    json!({
        "id": d.id.as_str(),
        "region": d.region.as_str(),
        "url": d.url.as_str(),
        "has_signing_secret": d.has_signing_secret,
        "enabled": d.enabled,
        "paused_until": d.paused_until,
    })
}
