//! The audit log's table on both stores: only ever appended to. An UPDATE
//! is refused by the database itself (a trigger), and on PostgreSQL a
//! TRUNCATE too; retention's DELETE is the only way out.

use remit::domain::Region;

use crate::support::{Backend, TestDb};

#[tokio::test]
async fn an_entry_cannot_be_rewritten_only_deleted() {
    for backend in Backend::ALL {
        let db = TestDb::on(backend).await;
        db.destination("crm", Region::EU).await;
        let entries = "SELECT count(*) AS n FROM audit_log";
        assert_eq!(db.count(entries).await, 1, "{backend:?}");
        for rewrite in [
            "UPDATE audit_log SET actor_kind = 'bootstrap'",
            "UPDATE audit_log SET after = NULL",
        ] {
            let refused = db.try_execute(rewrite).await;
            let error = refused.expect_err(rewrite).to_string();
            assert!(error.contains("append-only"), "{backend:?}: {error}");
        }
        if backend == Backend::Postgres {
            let error = db.try_execute("TRUNCATE audit_log").await.unwrap_err();
            assert!(error.to_string().contains("append-only"), "{error}");
        }
        assert_eq!(db.count(entries).await, 1, "{backend:?}: nothing changed");
        assert_eq!(db.execute("DELETE FROM audit_log").await, 1, "{backend:?}");
    }
}
