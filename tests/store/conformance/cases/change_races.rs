//! A cancel and a reschedule racing claims: against PostgreSQL the two
//! really run at once.

use remit::store::{Cancel, Changes, Leases, Move, Reports};

use super::changes::{state, to};
use super::*;
use crate::support::claim;

/// A cancel and a claim at once: a task the cancel ended now is never
/// leased, and a task the claim leased is cancelled only after its
/// attempt. Against PostgreSQL the two really run at once.
pub async fn a_cancel_racing_a_claim_never_lets_a_cancelled_task_go<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let mut ids = Vec::new();
    for n in 0..40 {
        ids.push(task(h, &format!("r{n}"), &d, Region::US).await);
    }
    h.clock().advance(Duration::hours(1));
    let cancels = async {
        let mut answers = Vec::new();
        for id in &ids {
            answers.push((*id, s.cancel(*id, "tok_ops").await.unwrap()));
        }
        answers
    };
    let claims = async {
        let mut leased = Vec::new();
        for _ in 0..8 {
            let batch = s.claim_due(&claim(Region::US, "c", 5)).await.unwrap();
            leased.extend(batch.into_iter().map(|c| c.task.id));
        }
        leased
    };
    let (answers, leased) = tokio::join!(cancels, claims);
    for (id, answer) in answers {
        match answer {
            Cancel::Cancelled(_) => assert!(!leased.contains(&id), "{id} leased after its cancel"),
            Cancel::AfterAttempt(_) => assert!(leased.contains(&id), "{id} waits on no attempt"),
            other => panic!("{other:?}"),
        }
    }
    assert!(claim_all(h).await.is_empty(), "nothing left to claim");
}

/// A reschedule and a claim at once: never both a lease and a move of the
/// same task, and never two live versions of it.
pub async fn a_reschedule_racing_a_claim_leaves_one_version<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let mut ids = Vec::new();
    for n in 0..40 {
        ids.push(task(h, &format!("r{n}"), &d, Region::US).await);
    }
    h.clock().advance(Duration::hours(1));
    let later = t0() + Duration::days(30);
    let moves = async {
        let mut answers = Vec::new();
        for id in &ids {
            answers.push((*id, s.reschedule(*id, &to(later)).await.unwrap()));
        }
        answers
    };
    let claims = async {
        let mut leased = Vec::new();
        for _ in 0..8 {
            let batch = s.claim_due(&claim(Region::US, "c", 5)).await.unwrap();
            leased.extend(batch.into_iter().map(|c| c.task.id));
        }
        leased
    };
    let (answers, leased) = tokio::join!(moves, claims);
    for (id, answer) in answers {
        let t = state(h, id).await;
        match answer {
            Move::Moved(_) => {
                assert!(!leased.contains(&id), "{id} leased after its move");
                assert_eq!((t.state, t.not_before), (TaskState::Pending, later));
            }
            Move::AfterAttempt(_) => {
                assert!(leased.contains(&id));
                assert_eq!(t.state, TaskState::Leased);
            }
            other => panic!("{other:?}"),
        }
    }
    let counts = s.region_counts(Region::US).await.unwrap().counts;
    assert_eq!(counts.pending + counts.leased + counts.retry_wait, 40);
}
