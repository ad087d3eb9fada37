//! Every /v1 route of the OpenAPI document, written every other way an
//! attacker might spell it (a letter of a literal segment percent-encoded,
//! double encoding, dot segments, doubled and trailing slashes, upper
//! case), by every kind of token: no spelling but the canonical one ever
//! reaches a handler. The encoded and dot forms are refused 400 before any
//! route is looked up; the rest are other paths, refused 4xx (no route, or
//! a parameter's route that refuses them). The canonical form
//! still admits exactly the scopes `scopes.rs` checks.

use remit::domain::Region;
use serde_json::json;

use super::client::Api;
use super::scopes::{checked_in, fixture, grant, stored};
use crate::support::{self, Receiver, TestDb, API_TOKEN};

/// How a spelling must be refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// 400, before any route is looked up: not the path's one spelling.
    NotCanonical,
    /// Some 4xx: canonical, but another path (no route, or a route with a
    /// parameter that refuses it for what it is).
    OtherPath,
}

impl Refused {
    pub fn admits(self, status: u16) -> bool {
        match self {
            Refused::NotCanonical => status == 400,
            Refused::OtherPath => (400..500).contains(&status),
        }
    }
}

/// The spellings of `path` other than itself. `template` is the route as the
/// document writes it: its `{…}` segments are data and left alone.
pub fn variants(template: &str, path: &str) -> Vec<(String, Refused)> {
    let template: Vec<&str> = template.split('/').collect();
    let segments: Vec<&str> = path.split('/').collect();
    let literal = |n: usize| !template[n].starts_with('{');
    let join = |segments: &[String]| segments.join("/");
    let owned: Vec<String> = segments.iter().map(|s| (*s).to_owned()).collect();
    let mut out = Vec::new();
    for (n, segment) in segments.iter().enumerate().skip(1) {
        if !literal(n) {
            continue;
        }
        for (i, c) in segment.char_indices() {
            let with = |encoded: String| {
                let mut changed = owned.clone();
                changed[n] = format!("{}{encoded}{}", &segment[..i], &segment[i + 1..]);
                join(&changed)
            };
            out.push((with(format!("%{:02x}", c as u32)), Refused::NotCanonical));
            out.push((with(format!("%{:02X}", c as u32)), Refused::NotCanonical));
            // Double encoding is decoded once: another path, not this one.
            out.push((with(format!("%25{:02x}", c as u32)), Refused::OtherPath));
        }
        let mut upper = owned.clone();
        upper[n] = segment.to_uppercase();
        if upper[n] != *segment {
            out.push((join(&upper), Refused::OtherPath));
        }
        for inserted in [".", "x/.."] {
            let mut dotted = owned.clone();
            dotted[n] = format!("{inserted}/{segment}");
            out.push((join(&dotted), Refused::NotCanonical));
        }
        let mut doubled = owned.clone();
        doubled[n] = format!("/{segment}");
        out.push((join(&doubled), Refused::NotCanonical));
    }
    out.push((format!("{path}/"), Refused::OtherPath));
    out.push((format!("{path}/."), Refused::NotCanonical));
    out.push((path.to_uppercase(), Refused::OtherPath));
    out
}

#[actix_rt::test]
async fn no_spelling_of_a_route_gets_past_its_scope() {
    let db = TestDb::running_on(support::Backend::Postgres).await;
    let receiver = Receiver::start();
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    let hook = receiver.url("/hook");
    let task_id = fixture(&api, &hook).await;
    let (victim, _) = stored(&db, grant("read", &[])).await;
    let tokens = [
        ("read", stored(&db, grant("read", &[])).await.1),
        (
            "read for one tenant",
            stored(&db, grant("read", &["clinic-1"])).await.1,
        ),
        ("schedule", stored(&db, grant("schedule", &[])).await.1),
        (
            "schedule for one tenant",
            stored(&db, grant("schedule", &["clinic-1"])).await.1,
        ),
        ("admin", API_TOKEN.to_owned()),
    ];

    let document = checked_in();
    let mut tried = 0;
    for (template, operations) in document["paths"].as_object().unwrap() {
        if !template.starts_with("/v1/") {
            continue;
        }
        let path = if template.starts_with("/v1/tasks/{id}") {
            template.replace("{id}", &task_id)
        } else if template.starts_with("/v1/tokens/{id}") {
            template.replace("{id}", victim.id.as_str())
        } else if template.starts_with("/v1/replays/{id}") {
            template.replace("{id}", &uuid::Uuid::new_v4().to_string())
        } else {
            template.replace("{id}", "crm")
        };
        for method in operations.as_object().unwrap().keys() {
            let method = method.to_uppercase();
            let body = match (method.as_str(), template.as_str()) {
                ("POST", "/v1/tokens") => Some(json!({"scope": "admin"})),
                ("POST", "/v1/destinations") => {
                    Some(json!({"id": "evil", "region": "eu", "url": hook}))
                }
                ("POST", "/v1/tasks/replay") => Some(json!({"destination_id": "crm"})),
                ("POST", _) => Some(json!({})),
                _ => None,
            };
            for (spelling, expected) in variants(template, &path) {
                for (who, token) in &tokens {
                    let (status, answer) = api
                        .call(&method, &spelling, Some(token), body.clone())
                        .await;
                    assert!(
                        expected.admits(status),
                        "{method} {spelling} by a {who} token answered {status}, \
                         expected {expected:?}: {answer}"
                    );
                    tried += 1;
                }
            }
        }
    }
    assert!(tried > 1_000, "only {tried} requests tried");
    // Nothing the variants asked for happened.
    let (_, listed) = api.get("/v1/tokens").await;
    assert_eq!(listed.as_array().unwrap().len(), 5, "{listed}");
    assert_eq!(api.get("/v1/destinations/evil").await.0, 404);
    runtime.shutdown().await;
}
