//! The audit log: every admin call writes exactly one entry, as the handle
//! it was called on acts, with the settings before and after and never a
//! secret's value; a call that is refused or rolled back writes none.

use remit::domain::{
    Actor, AuditAction, AuditEntry, AuditFilter, Rotation, TargetKind, TenantId, TokenGrant,
};
use remit::store::{
    ApiTokens, Cancel, Changes, Destinations, Erase, Jobs, Leases, Move, Reports, Schedule,
};
use remit::store::{JobAction, JobFilter, NewJob};

use super::changes::to;
use super::*;

pub(super) const FIRST_SECRET: &str = "whsec_first-secret-never-in-the-log";
pub(super) const SECOND_SECRET: &str = "whsec_second-secret-never-in-the-log";

pub(super) fn ops() -> Actor {
    Actor::Token {
        id: "tok_ops".into(),
        name: Some("on call".into()),
    }
}

/// Every entry after `after` (an id; 0 for all), oldest first.
pub(super) async fn entries_after<S: Reports>(s: &S, after: i64) -> Vec<AuditEntry> {
    let mut all = Vec::new();
    let mut before = None;
    loop {
        let page = s
            .audit_entries(&AuditFilter::default(), before, 100)
            .await
            .unwrap();
        all.extend(page.entries.into_iter().filter(|e| e.id > after));
        match page.next {
            Some(next) if next > after => before = Some(next),
            _ => break,
        }
    }
    all.reverse();
    all
}

/// The id of the newest entry, 0 when there is none.
pub(super) async fn newest_id<S: Reports>(s: &S) -> i64 {
    let page = s
        .audit_entries(&AuditFilter::default(), None, 1)
        .await
        .unwrap();
    page.entries.first().map_or(0, |e| e.id)
}

fn actions(entries: &[AuditEntry]) -> Vec<AuditAction> {
    entries.iter().map(|e| e.action).collect()
}

/// Fails when any of `secrets` appears anywhere in the entries' settings.
pub(super) fn holds_no_secret(entries: &[AuditEntry], secrets: &[&str]) {
    for e in entries {
        let text = format!("{} {}", json(&e.before), json(&e.after));
        for secret in secrets {
            assert!(
                !text.contains(secret),
                "{:?} shows a secret: {text}",
                e.action
            );
        }
    }
}

fn json(value: &Option<serde_json::Value>) -> String {
    value.as_ref().map(ToString::to_string).unwrap_or_default()
}

pub async fn each_admin_call_writes_one_entry_as_its_actor<H: Harness>(h: &H) {
    let s = h.acting_as(ops());
    let (new, token) = TokenGrant {
        scope: "read".into(),
        tenants: vec![],
        expires_at: None,
        name: Some("dashboard".into()),
    }
    .check(t0())
    .unwrap();
    let hash = remit::payload_crypto::hex(&new.hash[..]);
    let made = s.add_api_token(new).await.unwrap();
    s.revoke_api_token(&made.id).await.unwrap().unwrap();
    let id = DestinationId::new("crm").unwrap();
    let url = "http://127.0.0.1:9/hooks";
    let new = NewDestination::new(id.clone(), Region::EU, url, Some(FIRST_SECRET.into())).unwrap();
    s.add_destination(new.clone()).await.unwrap();
    s.add_destination(new).await.unwrap();
    s.disable_destination(&id, Some("maintenance".into()))
        .await
        .unwrap();
    s.enable_destination(&id).await.unwrap();
    let rotation = Rotation::new(SECOND_SECRET.into(), None, t0()).unwrap();
    s.rotate_secret(&id, rotation).await.unwrap();
    assert_eq!(s.retry_now(&id, None).await.unwrap(), 0);
    let filter = JobFilter {
        destination: Some(id.clone()),
        ..JobFilter::default()
    };
    let job = s
        .create_job(NewJob {
            region: Region::EU,
            action: JobAction::Cancel,
            filter,
            requested_by: "tok_ops".into(),
            horizon: Duration::hours(6),
        })
        .await
        .unwrap();

    let entries = entries_after(&s, 0).await;
    use AuditAction::*;
    assert_eq!(
        actions(&entries),
        [
            TokenCreate,
            TokenRevoke,
            DestinationCreate,
            DestinationCreate,
            DestinationDisable,
            DestinationEnable,
            DestinationRotateSecret,
            DestinationRetryNow,
            CancelJobCreate,
        ]
    );
    for pair in entries.windows(2) {
        assert!(pair[0].id < pair[1].id, "ids grow: {pair:?}");
    }
    for e in &entries {
        assert_eq!(e.actor, ops(), "{:?}", e.action);
        assert_eq!(e.at, t0(), "at the store's now: {:?}", e.action);
    }
    holds_no_secret(&entries, &[FIRST_SECRET, SECOND_SECRET, &token, &hash]);

    let [made_e, revoked, created, repeat, disabled, enabled, rotated, retried, job_e] =
        &entries[..]
    else {
        unreachable!()
    };
    assert_eq!(made_e.target.kind, TargetKind::Token);
    assert_eq!(made_e.target.id, made.id.as_str());
    assert_eq!((made_e.region, &made_e.before), (None, &None));
    let after = made_e.after.as_ref().unwrap();
    assert_eq!(
        (after["scope"].as_str(), after["name"].as_str()),
        (Some("read"), Some("dashboard"))
    );
    assert!(revoked.before.as_ref().unwrap()["revoked_at"].is_null());
    assert!(revoked.after.as_ref().unwrap()["revoked_at"].is_string());

    for e in [created, repeat, disabled, enabled, rotated, retried] {
        assert_eq!(
            (e.target.kind, e.target.id.as_str()),
            (TargetKind::Destination, "crm")
        );
        assert_eq!(e.region, Some(Region::EU), "{:?}", e.action);
    }
    assert_eq!(created.before, None, "it did not exist");
    let settings = created.after.as_ref().unwrap();
    assert_eq!(settings["url"], url);
    assert_eq!(settings["has_signing_secret"], true);
    assert_eq!(settings["enabled"], true);
    assert_eq!(repeat.before, repeat.after, "a repeat changes nothing");
    let (was, now) = (
        disabled.before.as_ref().unwrap(),
        disabled.after.as_ref().unwrap(),
    );
    assert_eq!(
        (&was["enabled"], &now["enabled"]),
        (&true.into(), &false.into())
    );
    assert_eq!(now["disabled_reason"], "maintenance");
    assert_eq!(enabled.after.as_ref().unwrap()["enabled"], true);
    let secrets = |v: &Option<serde_json::Value>| v.as_ref().unwrap()["signing_secrets"].clone();
    let (old, new) = (secrets(&rotated.before), secrets(&rotated.after));
    assert_eq!(
        (old.as_array().unwrap().len(), new.as_array().unwrap().len()),
        (1, 2)
    );
    assert!(old[0]["expires_at"].is_null() && new[0]["expires_at"].is_string());
    assert_eq!(old[0]["id"], new[0]["id"], "secrets named by id");
    assert_eq!(retried.after.as_ref().unwrap()["tasks"], 0);
    assert_eq!(
        (job_e.target.kind, job_e.target.id.clone()),
        (TargetKind::Job, job.id.to_string())
    );
    assert_eq!(job_e.after.as_ref().unwrap()["destination_id"], "crm");
}

pub async fn the_task_changes_write_one_entry_each<H: Harness>(h: &H) {
    let d = destination(h, "crm", Region::US).await;
    let [waiting, moved, erased, failed] =
        ["waiting", "moved", "erased", "failed"].map(|r| new_task(r, &d, Region::US));
    let s = h.acting_as(Actor::Cli {
        user: "alice".into(),
    });
    let mut ids = Vec::new();
    for new in [waiting, moved, erased, failed] {
        ids.push(s.schedule(new).await.unwrap().task.id);
    }
    let marker = newest_id(&s).await;
    let c = claim_one(h).await;
    // The claimed task fails; the others are moved and erased.
    let others: Vec<TaskId> = ids.iter().copied().filter(|i| *i != c.task.id).collect();
    let ids = [c.task.id, others[0], others[1]];
    s.fail(&c.lease(), &FailureReason::MaxAttempts, &record(500))
        .await
        .unwrap();
    assert!(
        entries_after(&s, marker).await.is_empty(),
        "scheduling and the runtime's calls are not admin actions"
    );

    assert!(matches!(
        s.replay(ids[0], Duration::hours(1)).await.unwrap(),
        Replayed::Replayed(_)
    ));
    assert!(matches!(
        s.cancel(ids[0], "cli").await.unwrap(),
        Cancel::Cancelled(_)
    ));
    assert!(matches!(
        s.cancel(ids[0], "cli").await.unwrap(),
        Cancel::AlreadyCancelled(_)
    ));
    let later = t0() + Duration::days(1);
    assert!(matches!(
        s.reschedule(ids[1], &to(later)).await.unwrap(),
        Move::Moved(_)
    ));
    assert!(matches!(
        s.erase(ids[2], "cli").await.unwrap(),
        Erase::Erased(_)
    ));
    let tenant = TenantId::new("clinic-1").unwrap();
    let round = s.erase_tenant(&tenant, "cli", 10).await.unwrap();

    let entries = entries_after(&s, marker).await;
    use AuditAction::*;
    assert_eq!(
        actions(&entries),
        [
            TaskReplay,
            TaskCancel,
            TaskCancel,
            TaskReschedule,
            TaskErase,
            TenantErase
        ]
    );
    for (e, task) in entries.iter().zip([ids[0], ids[0], ids[0], ids[1], ids[2]]) {
        assert_eq!(
            (e.target.kind, e.target.id.clone()),
            (TargetKind::Task, task.to_string())
        );
        assert_eq!(e.region, Some(Region::US));
        assert_eq!(
            e.actor,
            Actor::Cli {
                user: "alice".into()
            }
        );
    }
    let state = |v: &Option<serde_json::Value>| v.as_ref().unwrap()["state"].clone();
    assert_eq!(
        (state(&entries[0].before), state(&entries[0].after)),
        ("failed".into(), "pending".into())
    );
    assert_eq!(state(&entries[1].after), "cancelled");
    assert_eq!(
        entries[2].before, entries[2].after,
        "a repeat changes nothing"
    );
    let not_before = |v: &Option<serde_json::Value>| v.as_ref().unwrap()["not_before"].clone();
    assert_ne!(
        not_before(&entries[3].before),
        not_before(&entries[3].after)
    );
    assert_eq!(entries[4].after.as_ref().unwrap()["payload_erased"], true);
    let tenant_e = &entries[5];
    assert_eq!(
        (tenant_e.target.kind, tenant_e.target.id.as_str()),
        (TargetKind::Tenant, "clinic-1")
    );
    assert_eq!(tenant_e.after.as_ref().unwrap()["erased"], round.erased);
    holds_no_secret(&entries, &["1970-01-01"]);
}
