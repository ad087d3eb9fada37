//! API tokens: stored as their hash, found by it, listed, revoked.

use chrono::{DateTime, Duration, Utc};
use remit::domain::{token_hash, NewApiToken, Scope, TenantId, TokenGrant, TokenId};
use remit::store::ApiTokens;

use super::*;

fn grant(
    scope: &str,
    tenants: &[&str],
    expires_at: Option<DateTime<Utc>>,
) -> (NewApiToken, String) {
    TokenGrant {
        scope: scope.into(),
        tenants: tenants.iter().map(|t| (*t).to_owned()).collect(),
        expires_at,
        name: Some(format!("{scope} token")),
    }
    .check(t0())
    .unwrap()
}

pub async fn an_api_token_is_stored_as_made_and_once<H: Harness>(h: &H) {
    let s = h.store();
    let expires = t0() + Duration::days(30);
    let (new, token) = grant("schedule", &["clinic-1", "clinic-2"], Some(expires));
    let stored = s.add_api_token(new.clone()).await.unwrap();
    assert_eq!(stored.id, new.id);
    assert_eq!(stored.name.as_deref(), Some("schedule token"));
    assert_eq!(stored.scope, Scope::Schedule);
    assert_eq!(
        stored.tenants,
        Some(vec![
            TenantId::new("clinic-1").unwrap(),
            TenantId::new("clinic-2").unwrap()
        ])
    );
    assert_eq!(stored.created_at, t0(), "made at the store's now");
    assert_eq!(stored.expires_at, Some(expires));
    assert_eq!(stored.revoked_at, None);
    assert_eq!(
        s.api_token_by_hash(&token_hash(&token)).await.unwrap(),
        Some(stored.clone()),
        "read back as answered"
    );

    // The same token again, or another with its id, is a conflict and
    // changes nothing.
    assert!(matches!(
        s.add_api_token(new.clone()).await,
        Err(StoreError::Conflict { .. })
    ));
    let (other, _) = grant("read", &[], None);
    let same_id = NewApiToken {
        id: new.id.clone(),
        ..other
    };
    assert!(matches!(
        s.add_api_token(same_id).await,
        Err(StoreError::Conflict { .. })
    ));
    assert_eq!(s.api_tokens().await.unwrap(), vec![stored]);
}

pub async fn an_api_token_is_found_by_its_hash_only<H: Harness>(h: &H) {
    let s = h.store();
    let (admin, admin_token) = grant("admin", &[], None);
    let (read, read_token) = grant("read", &["t"], None);
    let read = NewApiToken {
        expires_at: Some(t0() - Duration::days(1)),
        ..read
    };
    let admin = s.add_api_token(admin).await.unwrap();
    let read = s.add_api_token(read).await.unwrap();
    let found = |token: String| async move { s.api_token_by_hash(&token_hash(&token)).await };
    assert_eq!(found(admin_token.clone()).await.unwrap(), Some(admin));
    // Expired tokens are found too: the caller decides at its now.
    assert_eq!(found(read_token).await.unwrap(), Some(read));
    assert_eq!(found(format!("{admin_token}x")).await.unwrap(), None);
    assert_eq!(found(String::new()).await.unwrap(), None);
}

pub async fn api_tokens_are_listed_oldest_first<H: Harness>(h: &H) {
    let s = h.store();
    assert_eq!(s.api_tokens().await.unwrap(), vec![]);
    let mut made = Vec::new();
    for scope in ["read", "admin", "schedule"] {
        made.push(s.add_api_token(grant(scope, &[], None).0).await.unwrap());
        h.clock().advance(Duration::seconds(1));
    }
    assert_eq!(s.api_tokens().await.unwrap(), made);
}

pub async fn a_revocation_is_kept_and_found<H: Harness>(h: &H) {
    let s = h.store();
    let (new, token) = grant("schedule", &[], None);
    let kept = s.add_api_token(grant("read", &[], None).0).await.unwrap();
    let stored = s.add_api_token(new).await.unwrap();
    h.clock().advance(Duration::minutes(5));
    let revoked = s.revoke_api_token(&stored.id).await.unwrap().unwrap();
    assert_eq!(revoked.revoked_at, Some(t0() + Duration::minutes(5)));
    assert_eq!(
        revoked,
        remit::domain::ApiToken {
            revoked_at: revoked.revoked_at,
            ..stored.clone()
        },
        "only revoked_at changes"
    );
    assert!(!revoked.usable_at(t0() + Duration::minutes(5)));

    // Again: the first revocation stands.
    h.clock().advance(Duration::minutes(5));
    let again = s.revoke_api_token(&stored.id).await.unwrap().unwrap();
    assert_eq!(again, revoked);
    assert_eq!(
        s.api_token_by_hash(&token_hash(&token)).await.unwrap(),
        Some(revoked.clone())
    );
    // Made at the same instant: in id order.
    let mut both = vec![kept, revoked];
    both.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(s.api_tokens().await.unwrap(), both);

    let unknown = TokenId::new("tok_0000000000000000").unwrap();
    assert_eq!(s.revoke_api_token(&unknown).await.unwrap(), None);
}
