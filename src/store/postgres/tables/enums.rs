//! The PostgreSQL ENUMs as store-private column types, converted into the
//! domain's enums at the edge so that `domain` never names diesel.

use std::io::Write;

use diesel::deserialize::{self, FromSql};
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, IsNull, Output, ToSql};

use super::schema::sql_types;
use crate::domain::{AttemptOutcome, TaskState};
pub(crate) use crate::store::rules::columns::{
    outcome_from_label, outcome_label, state_from_label, state_label,
};

/// `tasks.state` as read from and written to the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, diesel::FromSqlRow, diesel::AsExpression)]
#[diesel(sql_type = sql_types::TaskState)]
pub(crate) struct StateColumn(pub TaskState);

/// `attempts.outcome` as read from and written to the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, diesel::FromSqlRow, diesel::AsExpression)]
#[diesel(sql_type = sql_types::AttemptOutcome)]
pub(crate) struct OutcomeColumn(pub AttemptOutcome);

/// A label this build does not know is an error, never a guess: a newer
/// schema may have added a state that older code must leave alone.
fn unknown(kind: &str, label: &[u8]) -> Box<dyn std::error::Error + Send + Sync> {
    format!("unknown {kind} label {:?}", String::from_utf8_lossy(label)).into()
}

impl ToSql<sql_types::TaskState, Pg> for StateColumn {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        out.write_all(state_label(self.0).as_bytes())?;
        Ok(IsNull::No)
    }
}

impl FromSql<sql_types::TaskState, Pg> for StateColumn {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        state_from_label(value.as_bytes())
            .map(StateColumn)
            .ok_or_else(|| unknown("task_state", value.as_bytes()))
    }
}

impl ToSql<sql_types::AttemptOutcome, Pg> for OutcomeColumn {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        out.write_all(outcome_label(self.0).as_bytes())?;
        Ok(IsNull::No)
    }
}

impl FromSql<sql_types::AttemptOutcome, Pg> for OutcomeColumn {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        outcome_from_label(value.as_bytes())
            .map(OutcomeColumn)
            .ok_or_else(|| unknown("attempt_outcome", value.as_bytes()))
    }
}
