//! The audit entry each admin action writes, said once for every store:
//! the action's name, its target and region, and the settings before and
//! after. Settings never carry a secret's value: a destination says
//! whether it has a signing secret, a rotation names the secrets by id and
//! expiry, a token shows its id, name, scope, tenants and times (never the
//! token or its hash).

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};

use crate::domain::{
    ApiToken, AuditAction, AuditTarget, Destination, DestinationId, HeaderValue, NewAuditEntry,
    Region, SigningSecret, TargetKind, Task, TenantId,
};
use crate::store::contract::{ErasedTenant, Imported, Job};

/// An instant as the API writes it: RFC 3339 in UTC, with `Z`.
fn time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// A destination's settings as the audit log shows them.
pub fn destination_settings(d: &Destination) -> Value {
    let mut shown = json!({
        "url": d.url.as_str(),
        "region": d.region.as_str(),
        "enabled": d.enabled,
        "disabled_reason": d.health.disabled_reason,
        "has_signing_secret": d.has_signing_secret,
        "disable_after_seconds": d.health.overrides.after_seconds,
        "disable_after_failures": d.health.overrides.failures,
    });
    let fields = shown.as_object_mut().expect("an object");
    for (name, value) in d.settings.to_json() {
        fields.insert(name.to_owned(), value);
    }
    // A secret header by its name and hint only.
    let headers = d.settings.headers.iter().map(|h| match &h.value {
        HeaderValue::Plain(v) => json!({"name": h.name, "value": v}),
        HeaderValue::Secret { hint, .. } => json!({"name": h.name, "secret": true, "hint": hint}),
    });
    fields.insert("headers".to_owned(), Value::Array(headers.collect()));
    shown
}

/// A change of a destination (`action`), from `before` (`None` when it did
/// not exist) to `after`.
pub fn destination_changed(
    action: AuditAction,
    before: Option<&Destination>,
    after: &Destination,
) -> NewAuditEntry {
    let entry = NewAuditEntry::new(action, destination_target(&after.id))
        .region(after.region)
        .after(destination_settings(after));
    match before {
        Some(before) => entry.before(destination_settings(before)),
        None => entry,
    }
}

fn destination_target(id: &DestinationId) -> AuditTarget {
    AuditTarget::new(TargetKind::Destination, id.as_str())
}

fn secrets(list: &[SigningSecret]) -> Value {
    list.iter()
        .map(|s| json!({"id": s.id, "created_at": time(s.created_at), "expires_at": s.expires_at.map(time)}))
        .collect()
}

/// A rotation: the secrets before (by id and expiry) and after.
pub fn secret_rotated(
    id: &DestinationId,
    region: Region,
    before: &[SigningSecret],
    after: &[SigningSecret],
) -> NewAuditEntry {
    NewAuditEntry::new(AuditAction::DestinationRotateSecret, destination_target(id))
        .region(region)
        .before(json!({ "signing_secrets": secrets(before) }))
        .after(json!({ "signing_secrets": secrets(after) }))
}

/// Tasks waiting for a retry made due now.
pub fn retried_now(
    id: &DestinationId,
    region: Region,
    tenant: Option<&TenantId>,
    moved: u64,
) -> NewAuditEntry {
    NewAuditEntry::new(AuditAction::DestinationRetryNow, destination_target(id))
        .region(region)
        .after(json!({"tenant_id": tenant.map(TenantId::as_str), "tasks": moved}))
}

/// An API token's settings: never the token, never its hash.
pub fn token_settings(t: &ApiToken) -> Value {
    json!({
        "id": t.id.as_str(),
        "name": t.name,
        "scope": t.scope.as_str(),
        "tenants": t.tenants.as_ref().map(|ts| ts.iter().map(TenantId::as_str).collect::<Vec<_>>()),
        "created_at": time(t.created_at),
        "expires_at": t.expires_at.map(time),
        "revoked_at": t.revoked_at.map(time),
    })
}

pub fn token_created(t: &ApiToken) -> NewAuditEntry {
    NewAuditEntry::new(
        AuditAction::TokenCreate,
        AuditTarget::new(TargetKind::Token, t.id.as_str()),
    )
    .after(token_settings(t))
}

pub fn token_revoked(before: &ApiToken, after: &ApiToken) -> NewAuditEntry {
    NewAuditEntry::new(
        AuditAction::TokenRevoke,
        AuditTarget::new(TargetKind::Token, after.id.as_str()),
    )
    .before(token_settings(before))
    .after(token_settings(after))
}

/// What an operator's change of a task may touch; never the payload.
pub fn task_settings(t: &Task) -> Value {
    json!({
        "tenant_id": t.tenant_id.as_str(),
        "reminder_id": t.reminder_id.as_str(),
        "destination_id": t.destination_id.as_str(),
        "state": t.state.as_str(),
        "not_before": time(t.not_before),
        "retry_horizon_at": time(t.retry_horizon_at),
        "failure_reason": t.failure_reason,
        "waiting_change": t.waiting_change.map(|c| c.label()),
        "payload_erased": t.payload_erased_at.is_some(),
    })
}

/// A change of one task (`action`: replay, cancel, reschedule, erase).
pub fn task_changed(action: AuditAction, before: &Task, after: &Task) -> NewAuditEntry {
    NewAuditEntry::new(
        action,
        AuditTarget::new(TargetKind::Task, after.id.to_string()),
    )
    .region(after.region)
    .before(task_settings(before))
    .after(task_settings(after))
}

/// One round of a tenant's erasure.
pub fn tenant_erased(tenant: &TenantId, round: ErasedTenant) -> NewAuditEntry {
    NewAuditEntry::new(
        AuditAction::TenantErase,
        AuditTarget::new(TargetKind::Tenant, tenant.as_str()),
    )
    .after(json!({"erased": round.erased, "cancelled": round.cancelled}))
}

/// A bulk replay or cancel recorded.
pub fn job_created(job: &Job) -> NewAuditEntry {
    use crate::store::contract::JobAction;
    let action = match job.action {
        JobAction::Replay => AuditAction::ReplayJobCreate,
        JobAction::Cancel => AuditAction::CancelJobCreate,
    };
    let f = &job.filter;
    NewAuditEntry::new(
        action,
        AuditTarget::new(TargetKind::Job, job.id.to_string()),
    )
    .region(job.region)
    .after(json!({
        "action": job.action.as_str(),
        "tenant_id": f.tenant.as_ref().map(TenantId::as_str),
        "reminder_id": f.reminder.as_ref().map(|r| r.as_str()),
        "destination_id": f.destination.as_ref().map(DestinationId::as_str),
        "failure_reason": f.reason,
        "not_before_from": f.from.map(time),
        "not_before_until": f.until.map(time),
        "horizon_seconds": job.horizon.num_seconds(),
    }))
}

/// One transaction of an import: `what` is `destinations` or `tasks`,
/// `ids` the records it carried.
pub fn imported(what: &str, ids: &[String], outcome: Imported) -> NewAuditEntry {
    NewAuditEntry::new(
        AuditAction::Import,
        AuditTarget::new(TargetKind::Import, what),
    )
    .after(json!({
        "records": ids.len(),
        "first": ids.first(),
        "last": ids.last(),
        "added": outcome.added,
        "already": outcome.already,
    }))
}

/// The end of a rekey: the recorded keys it forgot (nothing is sealed
/// under them any more, so a ring without them starts), by fingerprint, and
/// the newest key everything is now sealed under.
pub fn keys_forgotten(newest: &str, forgotten: &[String]) -> NewAuditEntry {
    NewAuditEntry::new(
        AuditAction::Rekey,
        AuditTarget::new(TargetKind::PayloadKey, newest),
    )
    .after(json!({"forgotten": forgotten}))
}

/// A prune of the audit log that took `deleted` entries of `scope`, those
/// written before `cutoff`.
pub fn audit_pruned(
    scope: crate::store::contract::AuditScope,
    cutoff: chrono::DateTime<chrono::Utc>,
    deleted: u64,
) -> NewAuditEntry {
    let entry = NewAuditEntry::new(
        AuditAction::AuditPrune,
        AuditTarget::new(TargetKind::AuditLog, scope.label()),
    )
    .after(json!({"deleted": deleted, "before": cutoff.to_rfc3339()}));
    match scope {
        crate::store::contract::AuditScope::Region(r) => entry.region(r),
        _ => entry,
    }
}
