//! `remit rekey`: re-seal stored payloads and signing secrets under the
//! newest payload key, in small batches while the runtimes run, then
//! forget the keys nothing is sealed under; and the counts under each key
//! that `remit rekey` and `remit status` show.

use remit::store::Keys;
use remit::store::{Database, KeyCount, StoreError};
use serde_json::{json, Value};

use crate::words::counted;

/// What a whole rekey did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RekeyReport {
    pub payloads: u64,
    pub secrets: u64,
    pub batches: u64,
    /// The recorded keys forgotten at the end: nothing is sealed under
    /// them, so a ring without them starts.
    pub forgotten: Vec<String>,
    /// What is still sealed under each key other than the newest (written
    /// while the rekey ran, by a process without the newest key).
    pub remaining: Vec<KeyCount>,
}

/// Re-seals everything under older keys, `batch` rows of each kind per
/// transaction, calling `progress` after each batch.
pub async fn rekey(
    store: &Database,
    newest: &str,
    batch: u32,
    mut progress: impl FnMut(&RekeyReport),
) -> Result<RekeyReport, StoreError> {
    let mut report = RekeyReport::default();
    let mut after = None;
    loop {
        let done = store.rekey_batch(after, batch).await?;
        report.batches += 1;
        report.payloads += done.payloads;
        report.secrets += done.secrets;
        progress(&report);
        if done.next.is_none() && done.secrets == 0 {
            break;
        }
        after = done.next.or(after);
    }
    report.forgotten = store
        .forget_unused_keys()
        .await?
        .iter()
        .map(|f| remit::payload_crypto::hex(f))
        .collect();
    report.remaining = store
        .sealed_counts()
        .await?
        .into_iter()
        .filter(|c| c.fingerprint != newest)
        .collect();
    Ok(report)
}

/// The counts under each key, as `remit status` prints them.
pub fn counts_to_text(counts: &[KeyCount], newest: Option<&str>) -> String {
    if counts.is_empty() {
        return "Nothing sealed yet.\n".into();
    }
    let mut out = String::new();
    for c in counts {
        let mark = if Some(c.fingerprint.as_str()) == newest {
            " (newest configured)"
        } else {
            ""
        };
        out.push_str(&format!(
            "  key {}{mark}: {}, {}\n",
            c.fingerprint,
            counted(c.payloads as u64, "payload"),
            counted(c.secrets as u64, "signing secret")
        ));
    }
    out
}

pub fn counts_to_json(counts: &[KeyCount]) -> Value {
    json!(counts
        .iter()
        .map(|c| json!({
            "fingerprint": c.fingerprint, "payloads": c.payloads, "secrets": c.secrets,
        }))
        .collect::<Vec<_>>())
}
