//! The audit log on `Database`: who a handle acts as. Its reads and prunes
//! are `Reports` and `Upkeep` calls, passed to the backend with the rest.

use super::handle::Database;
use crate::domain::Actor;

impl Database {
    /// The same database (pool, key, clock) whose admin calls record
    /// `actor` in the audit log, each in the transaction of its action. A
    /// handle no one acts through records `system`. Cheap: the clone shares
    /// the pool.
    pub fn acting_as(&self, actor: Actor) -> Self {
        match self {
            Database::Postgres(pg) => Database::Postgres(pg.acting_as(actor)),
            Database::Sqlite(lite) => Database::Sqlite(lite.acting_as(actor)),
        }
    }
}
