//! `remit export --file` writes a file readable by its owner only, whether
//! it creates the file or replaces one that was readable by everyone, and
//! the file imports again.

use std::os::unix::fs::PermissionsExt as _;

use remit::domain::Region;

use crate::support::{Backend, TestDb};

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[actix_rt::test]
async fn an_export_file_is_owner_only_and_imports_again() {
    let source = TestDb::on(Backend::Sqlite).await;
    let crm = source.destination("crm", Region::EU).await;
    source.task("renewal-42", &crm, Region::EU).await;
    let dir = std::env::temp_dir().join(format!("remit-export-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("schedule.jsonl");

    super::run(super::remit(&source).args(["export", "--file"]).arg(&file));
    assert_eq!(mode(&file), 0o600, "a new export file");

    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    super::run(super::remit(&source).args(["export", "--file"]).arg(&file));
    assert_eq!(mode(&file), 0o600, "an existing file is narrowed");

    let target = TestDb::on(Backend::Postgres).await;
    super::run(super::remit(&target).args(["import", "--file"]).arg(&file));
    assert_eq!(target.count("SELECT count(*) AS n FROM tasks").await, 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
