//! `remit token create | list | revoke`: API tokens, made and revoked
//! against the configured database (tokens are one set for the database,
//! not per region). A revocation holds from the next request on in every
//! process: the API looks each request's token up.

use chrono::{DateTime, Utc};
use remit::domain::{quoted, ApiToken, TokenGrant, TokenId};
use remit::store::ApiTokens;
use remit_actors::api::TokenView;
use remit_actors::words;

use super::connect::connect_without_payloads;
use super::error::CliError;
use super::report_format::ReportFormat;

pub async fn create(
    config: &remit_actors::config::Config,
    scope: String,
    tenants: Vec<String>,
    expires: Option<String>,
    name: Option<String>,
) -> Result<(), CliError> {
    let now = Utc::now();
    let expires_at = expires.map(|when| expiry(&when, now)).transpose()?;
    let grant = TokenGrant {
        scope,
        tenants,
        expires_at,
        name,
    };
    let (new, token) = grant.check(now).map_err(|e| CliError::Usage(flag(&e)))?;
    // Tokens hold no payloads.
    let store = connect_without_payloads(config).await?;
    let stored = store.add_api_token(new).await?;
    println!("{token}");
    eprintln!(
        "made token {} ({}); it is shown this once: remit keeps only its hash",
        stored.id,
        describe(&stored)
    );
    Ok(())
}

pub async fn list(
    config: &remit_actors::config::Config,
    format: ReportFormat,
) -> Result<(), CliError> {
    let store = connect_without_payloads(config).await?;
    let tokens = store.api_tokens().await?;
    match format {
        ReportFormat::Json => {
            let views: Vec<TokenView> = tokens.iter().map(TokenView::from).collect();
            let text = serde_json::to_string_pretty(&views)
                .map_err(|e| CliError::Usage(format!("could not write JSON: {e}")))?;
            println!("{text}");
        }
        ReportFormat::Text => {
            if tokens.is_empty() {
                println!("no API tokens");
            }
            for token in &tokens {
                println!(
                    "{}  {}  name {}  made {}  expires {}  revoked {}",
                    token.id,
                    describe(token),
                    token.name.as_deref().map_or("-".into(), quoted),
                    words::instant(token.created_at),
                    instant(token.expires_at),
                    instant(token.revoked_at),
                );
            }
        }
    }
    Ok(())
}

pub async fn revoke(config: &remit_actors::config::Config, id: &str) -> Result<(), CliError> {
    let id = TokenId::new(id).map_err(|e| CliError::Usage(e.to_string()))?;
    let store = connect_without_payloads(config).await?;
    let revoked = store
        .revoke_api_token(&id)
        .await?
        .ok_or_else(|| CliError::Usage(format!("no token with id {id}")))?;
    println!("revoked {} at {}", revoked.id, instant(revoked.revoked_at));
    Ok(())
}

/// `--expires`: an RFC 3339 instant, or a time from now (`90d`, `12h`).
fn expiry(when: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, CliError> {
    if let Ok(at) = DateTime::parse_from_rfc3339(when) {
        return Ok(at.with_timezone(&Utc));
    }
    humantime::parse_duration(when)
        .ok()
        .and_then(|d| chrono::Duration::from_std(d).ok())
        .and_then(|d| now.checked_add_signed(d))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--expires: must be RFC 3339 (2027-01-01T00:00:00Z) or a time from now \
                 (90d, 12h), not {}",
                quoted(when)
            ))
        })
}

/// An error about a field, named as the flag that sets it.
fn flag(e: &remit::domain::InvalidInput) -> String {
    let flag = match e.field {
        "tenants" => "--tenant",
        "expires_at" => "--expires",
        other => return format!("--{other}: {}", e.reason),
    };
    format!("{flag}: {}", e.reason)
}

/// Scope and tenants, as a person reads them.
fn describe(token: &ApiToken) -> String {
    match &token.tenants {
        None => format!("scope {}, every tenant", token.scope),
        Some(tenants) => format!(
            "scope {}, tenants {}",
            token.scope,
            tenants
                .iter()
                .map(|t| quoted(t.as_str()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn instant(at: Option<DateTime<Utc>>) -> String {
    at.map_or("-".into(), words::instant)
}
