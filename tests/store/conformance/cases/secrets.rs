//! Signing secrets: a rotation adds a secret and ends the valid ones at
//! its `old_expires_at` (a sooner end kept), a send reads the valid ones
//! newest first, and the list shows every secret without its value.

use remit::domain::Rotation;
use remit::store::Destinations;

use super::*;

fn rotation(secret: &str, ends_in: Duration) -> Rotation {
    Rotation::new(secret.into(), Some(t0() + ends_in), t0()).unwrap()
}

fn signed_with(id: &str, secret: Option<&str>) -> NewDestination {
    NewDestination::new(
        DestinationId::new(id).unwrap(),
        Region::US,
        "https://hooks.example/in",
        secret.map(str::to_owned),
    )
    .unwrap()
}

async fn signing<H: Harness>(h: &H, id: &DestinationId) -> Vec<String> {
    let target = h.store().send_target(id).await.unwrap().unwrap();
    target.secrets_at(t0()).map(str::to_owned).collect()
}

pub async fn a_rotation_keeps_the_old_secret_until_its_end<H: Harness>(h: &H) {
    let s = h.store();
    let crm = DestinationId::new("crm").unwrap();
    s.add_destination(signed_with("crm", Some("whsec_a")))
        .await
        .unwrap();
    let before = s.signing_secrets(&crm).await.unwrap();
    assert_eq!(before.len(), 1);
    assert_eq!((before[0].created_at, before[0].expires_at), (t0(), None));

    let added = s
        .rotate_secret(&crm, rotation("whsec_b", Duration::hours(1)))
        .await
        .unwrap();
    assert_eq!((added.created_at, added.expires_at), (t0(), None));
    assert_ne!(added.id, before[0].id);
    assert_eq!(
        signing(h, &crm).await,
        ["whsec_b", "whsec_a"],
        "newest first"
    );
    let target = s.send_target(&crm).await.unwrap().unwrap();
    assert_eq!(
        target.signing_secrets[1].expires_at,
        Some(t0() + Duration::hours(1)),
        "the old secret's end travels with it, for a sender that keeps it"
    );
    let listed = s.signing_secrets(&crm).await.unwrap();
    assert_eq!(listed[0].id, before[0].id, "oldest first");
    assert_eq!(listed[0].expires_at, Some(t0() + Duration::hours(1)));
    assert_eq!(listed[1], added);

    // Registering again with either valid secret is a repeat.
    for secret in ["whsec_a", "whsec_b"] {
        s.add_destination(signed_with("crm", Some(secret)))
            .await
            .unwrap();
    }

    h.clock().advance(Duration::hours(1));
    let now_signing: Vec<String> = s
        .send_target(&crm)
        .await
        .unwrap()
        .unwrap()
        .signing_secrets
        .into_iter()
        .map(|t| t.secret)
        .collect();
    assert_eq!(now_signing, ["whsec_b"], "the old secret ended on its own");
    match s
        .add_destination(signed_with("crm", Some("whsec_a")))
        .await
        .unwrap_err()
    {
        StoreError::Conflict { differs, .. } => assert_eq!(differs, "secret"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        s.signing_secrets(&crm).await.unwrap().len(),
        2,
        "kept, ended"
    );
}

pub async fn a_rotation_keeps_a_sooner_end<H: Harness>(h: &H) {
    let s = h.store();
    let crm = DestinationId::new("crm").unwrap();
    s.add_destination(signed_with("crm", Some("whsec_a")))
        .await
        .unwrap();
    s.rotate_secret(&crm, rotation("whsec_b", Duration::hours(1)))
        .await
        .unwrap();
    // A later end for the second rotation: the first secret keeps its
    // sooner one, the second takes the new one.
    s.rotate_secret(&crm, rotation("whsec_c", Duration::hours(5)))
        .await
        .unwrap();
    let ends: Vec<_> = s
        .signing_secrets(&crm)
        .await
        .unwrap()
        .into_iter()
        .map(|x| x.expires_at)
        .collect();
    assert_eq!(
        ends,
        [
            Some(t0() + Duration::hours(1)),
            Some(t0() + Duration::hours(5)),
            None
        ]
    );
    assert_eq!(signing(h, &crm).await, ["whsec_c", "whsec_b", "whsec_a"]);

    // Ending the old secrets now leaves only the newest signing.
    let at_once = Rotation::new("whsec_d".into(), Some(t0()), t0()).unwrap();
    s.rotate_secret(&crm, at_once).await.unwrap();
    assert_eq!(signing(h, &crm).await, ["whsec_d"]);
}

pub async fn secrets_of_an_unknown_destination_are_not_found<H: Harness>(h: &H) {
    let s = h.store();
    let gone = DestinationId::new("gone").unwrap();
    let refused = s
        .rotate_secret(&gone, rotation("whsec_a", Duration::hours(1)))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, StoreError::NotFound { .. }),
        "{refused:?}"
    );
    let refused = s.signing_secrets(&gone).await.unwrap_err();
    assert!(
        matches!(refused, StoreError::NotFound { .. }),
        "{refused:?}"
    );

    // A destination without a secret gains its first by a rotation.
    let plain = destination(h, "plain", Region::US).await;
    assert!(s.signing_secrets(&plain).await.unwrap().is_empty());
    s.rotate_secret(&plain, rotation("whsec_a", Duration::hours(1)))
        .await
        .unwrap();
    assert_eq!(signing(h, &plain).await, ["whsec_a"]);
    assert!(
        s.destination(&plain)
            .await
            .unwrap()
            .unwrap()
            .has_signing_secret
    );
}

pub async fn many_send_targets_carry_each_destinations_secrets<H: Harness>(h: &H) {
    let s = h.store();
    let one = DestinationId::new("one").unwrap();
    let two = DestinationId::new("two").unwrap();
    s.add_destination(signed_with("one", Some("whsec_1")))
        .await
        .unwrap();
    s.add_destination(signed_with("two", Some("whsec_2")))
        .await
        .unwrap();
    s.rotate_secret(&two, rotation("whsec_3", Duration::hours(1)))
        .await
        .unwrap();
    let plain = destination(h, "plain", Region::US).await;
    let many = s
        .send_targets(&[two.clone(), plain, one.clone(), two])
        .await
        .unwrap();
    let secrets: Vec<Vec<String>> = many
        .iter()
        .map(|t| {
            t.as_ref()
                .unwrap()
                .secrets_at(t0())
                .map(str::to_owned)
                .collect()
        })
        .collect();
    assert_eq!(
        secrets,
        [
            vec!["whsec_3", "whsec_2"],
            vec![],
            vec!["whsec_1"],
            vec!["whsec_3", "whsec_2"]
        ]
    );
}
