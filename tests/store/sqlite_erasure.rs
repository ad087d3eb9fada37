//! On the embedded store an erased payload leaves no bytes on disk: its
//! row (the body sealed under its data key, and that key) is overwritten
//! with zeros in the file (`secure_delete`), and the WAL that held it is
//! emptied once the erasure commits.

use remit::store::{Changes, Destinations, Schedule, SqliteStore, Transfer};
use std::path::{Path, PathBuf};

use remit::domain::{DestinationId, NewDestination, Payload, Region};

use crate::support::{new_task, test_key};

fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Whether `needle` is anywhere in the file (a missing file holds nothing).
fn holds(file: &Path, needle: &[u8]) -> bool {
    std::fs::read(file).is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle))
}

#[tokio::test]
async fn an_erased_payload_leaves_no_bytes_in_the_file_or_its_wal() {
    let dir = std::env::temp_dir().join(format!("remit-erase-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir(&dir).unwrap();
    let path = dir.join("remit.db");
    remit::store::migrate(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let store = SqliteStore::open(&path, test_key()).await.unwrap();
    let crm = DestinationId::new("crm").unwrap();
    let new = NewDestination::new(crm.clone(), Region::EU, "https://hooks.example/in", None);
    store.add_destination(new.unwrap()).await.unwrap();
    // A body larger than a page, so it spills into overflow pages.
    let mut task = new_task("health-record", &crm, Region::EU);
    task.payload = Payload::json(format!(r#"{{"notes":"{}"}}"#, "x".repeat(8_000)));
    let task = store.schedule(task).await.unwrap().task;
    let record = store.export_tasks(None, 1).await.unwrap().remove(0);
    // A stretch from the middle of the sealed body, and the sealed data key.
    let body = record.sealed.ciphertext[4_000..4_064].to_vec();
    let data_key = record.sealed.nonce[24..].to_vec();
    let (file, wal) = (path.clone(), beside(&path, "-wal"));
    assert!(
        holds(&file, &body) || holds(&wal, &body),
        "the body is on disk before (the control)"
    );

    store.erase(task.id, "tok_ops").await.unwrap();
    for (what, needle) in [("body", &body), ("data key", &data_key)] {
        assert!(!holds(&file, needle), "the {what} is left in the file");
        assert!(!holds(&wal, needle), "the {what} is left in the WAL");
    }
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}
