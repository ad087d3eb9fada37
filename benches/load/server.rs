//! The server's settings a run reports beside its figures, as a session
//! opened with the run's URL gets them. `jit` says whether a plan
//! estimated above `jit_above_cost` is compiled by LLVM before it runs:
//! figures from a server with it on and one with it off are not the same
//! figures (remit's own sessions ask for `jit = off`, docs/operations.md;
//! a URL whose options set `jit` keeps its own).

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::error::LoadError;

#[derive(QueryableByName)]
struct Setting {
    #[diesel(sql_type = Text)]
    value: String,
}

/// `SHOW jit` on a session of its own at `url`.
pub async fn jit(url: &str) -> Result<String, LoadError> {
    let mut conn = AsyncPgConnection::establish(url).await?;
    let query = diesel::sql_query("SELECT current_setting('jit') AS value");
    Ok(query.get_result::<Setting>(&mut conn).await?.value)
}
