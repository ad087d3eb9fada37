//! The embedded store's files are readable by their owner only: the
//! database file, and the `-wal` and `-shm` files SQLite makes beside it
//! once something is written.

use remit::store::{Destinations, SqliteStore};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use remit::domain::{DestinationId, NewDestination, Region};

use crate::support::test_key;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[tokio::test]
async fn the_sqlite_file_its_wal_and_its_shm_are_owner_only() {
    let dir = std::env::temp_dir().join(format!("remit-modes-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir(&dir).unwrap();
    let path = dir.join("remit.db");
    remit::store::migrate(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    assert_eq!(mode(&path), 0o600, "the file remit migrate creates");

    let store = SqliteStore::open(&path, test_key()).await.unwrap();
    let id = DestinationId::new("crm").unwrap();
    let new = NewDestination::new(id, Region::EU, "https://hooks.example/in", None).unwrap();
    store.add_destination(new).await.unwrap();
    // The store's connection is open, so the WAL and its index are there.
    for file in [path.clone(), beside(&path, "-wal"), beside(&path, "-shm")] {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}
