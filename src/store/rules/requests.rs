//! Rules every `Store` implementation applies the same way: validating a
//! request and what makes a repeat a conflict. (The idempotency key is the
//! domain's `idempotency_key`, the same in every store.)

use chrono::{DateTime, SubsecRound, Utc};

use crate::domain::{
    quoted, Destination, InvalidInput, NewDestination, NewTask, Payload, PruneRequest, Region,
    Task, MAX_PAYLOAD_BYTES,
};
use crate::store::contract::{Reschedule, Scheduled, StoreError};

/// Checks what can be checked without the database, and normalises the
/// deadline to the microseconds PostgreSQL keeps, so repeats compare equal.
pub(in crate::store) fn validate(new: NewTask) -> Result<NewTask, InvalidInput> {
    if new.payload.content_type.trim().is_empty() {
        return Err(InvalidInput::new("content_type", "must not be empty"));
    }
    if new.payload.body.len() > MAX_PAYLOAD_BYTES {
        return Err(InvalidInput::new(
            "payload",
            format!("must be at most {MAX_PAYLOAD_BYTES} bytes"),
        ));
    }
    if new.retry_horizon < chrono::Duration::zero() {
        return Err(InvalidInput::new("retry_horizon", "must not be negative"));
    }
    if new
        .not_before
        .checked_add_signed(new.retry_horizon)
        .is_none()
    {
        return Err(InvalidInput::new("not_before", "is too far in the future"));
    }
    Ok(NewTask {
        not_before: new.not_before.trunc_subsecs(6),
        ..new
    })
}

/// Checks a reschedule as `validate` checks a new task (its payload, if
/// any), and answers its deadline to the microseconds PostgreSQL keeps.
pub(in crate::store) fn validate_reschedule(
    change: &Reschedule,
) -> Result<DateTime<Utc>, InvalidInput> {
    if let Some(payload) = &change.payload {
        if payload.content_type.trim().is_empty() {
            return Err(InvalidInput::new("content_type", "must not be empty"));
        }
        if payload.body.len() > MAX_PAYLOAD_BYTES {
            return Err(InvalidInput::new(
                "payload",
                format!("must be at most {MAX_PAYLOAD_BYTES} bytes"),
            ));
        }
    }
    Ok(change.not_before.trunc_subsecs(6))
}

/// The destination must exist and live in the task's region.
pub(in crate::store) fn check_destination(
    region: Option<Region>,
    new: &NewTask,
) -> Result<(), InvalidInput> {
    match region {
        None => Err(InvalidInput::new(
            "destination_id",
            format!(
                "no destination {} is registered",
                quoted(new.destination_id.as_str())
            ),
        )),
        Some(r) if r != new.region => Err(InvalidInput::new(
            "region",
            format!(
                "destination {} is in region {}, not {}",
                quoted(new.destination_id.as_str()),
                quoted(r.as_str()),
                quoted(new.region.as_str())
            ),
        )),
        Some(_) => Ok(()),
    }
}

/// A pruning run deletes in bounded batches, and the age it keeps is
/// neither negative nor too large to subtract from now.
pub(in crate::store) fn check_prune(request: &PruneRequest) -> Result<(), InvalidInput> {
    if !(1..=PruneRequest::MAX_BATCH_SIZE).contains(&request.batch_size) {
        return Err(InvalidInput::new(
            "batch_size",
            format!("must be between 1 and {}", PruneRequest::MAX_BATCH_SIZE),
        ));
    }
    if request.older_than < chrono::Duration::zero()
        || request.older_than > chrono::Duration::days(PruneRequest::MAX_AGE_DAYS)
    {
        return Err(InvalidInput::new(
            "older_than",
            format!("must be between 0 and {} days", PruneRequest::MAX_AGE_DAYS),
        ));
    }
    Ok(())
}

/// A repeat of the same request returns the existing task; anything else
/// that reuses its ids is a conflict naming the fields, never their values.
pub(in crate::store) fn same_or_conflict(
    existing: Task,
    stored_payload: &Payload,
    new: &NewTask,
) -> Result<Scheduled, StoreError> {
    let payload = (*stored_payload != new.payload).then_some("payload");
    compare(existing, payload, new)
}

/// A request that reuses the ids of a task whose payload an operator
/// erased: the payload cannot be compared, and the task will not be sent
/// with it, so it is a conflict whatever the request holds.
pub(in crate::store) fn erased_conflict(
    existing: Task,
    new: &NewTask,
) -> Result<Scheduled, StoreError> {
    compare(existing, Some("erased payload"), new)
}

fn compare(
    existing: Task,
    payload: Option<&'static str>,
    new: &NewTask,
) -> Result<Scheduled, StoreError> {
    let mut differs = Vec::new();
    if existing.destination_id != new.destination_id {
        differs.push("destination_id");
    }
    if existing.region != new.region {
        differs.push("region");
    }
    if existing.not_before != new.not_before {
        differs.push("not_before");
    }
    differs.extend(payload);
    if existing.ordering_key != new.ordering_key {
        differs.push("ordering_key");
    }
    if differs.is_empty() {
        return Ok(Scheduled {
            task: existing,
            created: false,
        });
    }
    Err(StoreError::Conflict {
        what: format!(
            "task for tenant {} reminder {}",
            quoted(new.tenant_id.as_str()),
            quoted(new.reminder_id.as_str())
        ),
        differs: differs.join(", "),
    })
}

/// Registering an existing destination again: the same settings are a
/// repeat, others a conflict. `valid_secrets` are the values of the
/// secrets still valid: a registration repeats the secrets when it names
/// one of them (the destination may have been rotated since), or names
/// none and the destination has none.
pub(in crate::store) fn same_destination_or_conflict(
    existing: Destination,
    valid_secrets: &[String],
    new: &NewDestination,
) -> Result<Destination, StoreError> {
    let mut differs = Vec::new();
    if existing.region != new.region {
        differs.push("region");
    }
    if existing.url != new.url {
        differs.push("url");
    }
    let same_secret = match &new.signing_secret {
        Some(secret) => valid_secrets.contains(secret),
        None => valid_secrets.is_empty(),
    };
    if !same_secret {
        differs.push("secret");
    }
    if existing.health.overrides.after_seconds != new.overrides.after_seconds {
        differs.push("disable_after_seconds");
    }
    if existing.health.overrides.failures != new.overrides.failures {
        differs.push("disable_after_failures");
    }
    if differs.is_empty() {
        Ok(existing)
    } else {
        Err(StoreError::Conflict {
            what: format!("destination {}", new.id),
            differs: differs.join(", "),
        })
    }
}
