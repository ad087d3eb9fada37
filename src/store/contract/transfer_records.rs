//! What an export carries and an import writes back: a destination and a
//! task as records, below both the `Transfer` trait and the checks an
//! import runs on them (`transfer_checks`).

use chrono::{DateTime, Utc};

use super::headers::HeaderRecord;
use super::secrets::SecretRecord;
use crate::domain::{Attempt, Destination, Task};
use crate::payload_crypto::SealedPayload;

/// A destination as exported: what the API shows, plus what it keeps.
#[derive(Clone, PartialEq)]
pub struct DestinationRecord {
    pub destination: Destination,
    /// Every signing secret, ended ones included, oldest first, sealed.
    pub secrets: Vec<SecretRecord>,
    pub rate_tokens: Option<f64>,
    pub rate_refilled_at: Option<DateTime<Utc>>,
    /// Its custom headers' rows, in order, a secret's value still sealed
    /// (`destination.settings` carries its other settings, and the headers
    /// as shown).
    pub headers: Vec<HeaderRecord>,
    /// When it was deleted: a tombstone travels too, so the tasks that
    /// ended under it keep their destination in the importing store.
    pub deleted_at: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for DestinationRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DestinationRecord")
            .field("destination", &self.destination)
            .field("secrets", &self.secrets)
            .field("rate_tokens", &self.rate_tokens)
            .field("rate_refilled_at", &self.rate_refilled_at)
            .field("headers", &self.headers)
            .field("deleted_at", &self.deleted_at)
            .finish()
    }
}

/// A task as exported: its row, its sealed payload and its attempt log.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    pub task: Task,
    pub content_type: String,
    pub sealed: SealedPayload,
    pub attempts: Vec<Attempt>,
}

/// The content type the record of an erased payload carries: the payload's
/// row, its content type with it, is gone.
pub const ERASED_CONTENT_TYPE: &str = "application/octet-stream";

impl TaskRecord {
    /// The record of a task whose payload an operator erased: no sealed
    /// bytes (every part empty) and [`ERASED_CONTENT_TYPE`]; the task's
    /// `payload_erased_at` says so, and an import writes no payload for it.
    pub fn erased(task: Task, attempts: Vec<Attempt>) -> Self {
        Self {
            task,
            content_type: ERASED_CONTENT_TYPE.to_owned(),
            sealed: SealedPayload {
                key_fingerprint: Vec::new(),
                nonce: Vec::new(),
                ciphertext: Vec::new(),
            },
            attempts,
        }
    }

    /// Whether the record carries a payload to write: not once erased.
    pub fn has_payload(&self) -> bool {
        self.task.payload_erased_at.is_none()
    }
}
