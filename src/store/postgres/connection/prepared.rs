//! Raw SQL that PostgreSQL plans once per connection.
//!
//! diesel never caches a `sql_query` as a prepared statement (the text may
//! be built at run time), so each call of one is parsed and planned again;
//! for the claim that planning cost about as much as running it. The hot
//! statements are fixed strings, so they are written here with each
//! parameter used exactly once, in order (`$1`, `$2`, ... — a `params` CTE
//! takes them when one is needed twice), and built from their pieces: the
//! text between placeholders, and the binds diesel numbers itself. Nothing
//! marks them unsafe to cache, so the connection keeps each prepared and
//! PostgreSQL moves to a generic plan after a few runs.

use std::marker::PhantomData;

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{HasSqlType, Untyped};
use diesel::QueryResult;

/// A statement's text, to be followed by its binds in order.
pub(in crate::store::postgres) fn prepared(sql: &'static str) -> Prepared {
    Prepared { sql }
}

#[derive(Debug, Clone, Copy)]
pub(in crate::store::postgres) struct Prepared {
    sql: &'static str,
}

/// The text before the `index`th placeholder (0: before the first) or, for
/// the last index, after the last placeholder.
fn piece(sql: &str, index: usize) -> &str {
    let mut rest = sql;
    let mut skipped = 0;
    loop {
        let Some(at) = placeholder(rest) else {
            return rest;
        };
        if skipped == index {
            return &rest[..at.0];
        }
        rest = &rest[at.1..];
        skipped += 1;
    }
}

/// Where the next `$n` is: its start and end.
fn placeholder(sql: &str) -> Option<(usize, usize)> {
    let bytes = sql.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let end = (i + 1..bytes.len())
                .find(|&j| !bytes[j].is_ascii_digit())
                .unwrap_or(bytes.len());
            return Some((i, end));
        }
        i += 1;
    }
    None
}

/// The placeholders of `sql`, as numbers, in the order they appear.
#[cfg(test)]
pub(in crate::store::postgres) fn placeholders(sql: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut rest = sql;
    while let Some((start, end)) = placeholder(rest) {
        found.push(rest[start + 1..end].parse().unwrap_or(0));
        rest = &rest[end..];
    }
    found
}

/// A statement with its first `COUNT` binds.
pub(in crate::store::postgres) trait Pieces {
    const COUNT: usize;
    fn sql(&self) -> &'static str;
}

impl Pieces for Prepared {
    const COUNT: usize = 0;
    fn sql(&self) -> &'static str {
        self.sql
    }
}

impl<Q: Pieces, ST, V> Pieces for Bound<Q, ST, V> {
    const COUNT: usize = Q::COUNT + 1;
    fn sql(&self) -> &'static str {
        self.query.sql()
    }
}

/// A statement and one more bind.
#[must_use = "a statement runs only when executed or loaded"]
pub(in crate::store::postgres) struct Bound<Q, ST, V> {
    query: Q,
    value: V,
    sql_type: PhantomData<ST>,
}

impl Prepared {
    pub(in crate::store::postgres) fn bind<ST, V>(self, value: V) -> Bound<Self, ST, V> {
        Bound {
            query: self,
            value,
            sql_type: PhantomData,
        }
    }
}

impl<Q, ST0, V0> Bound<Q, ST0, V0> {
    pub(in crate::store::postgres) fn bind<ST, V>(self, value: V) -> Bound<Self, ST, V> {
        Bound {
            query: self,
            value,
            sql_type: PhantomData,
        }
    }
}

impl QueryFragment<Pg> for Prepared {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(piece(self.sql, 0));
        Ok(())
    }
}

impl<Q, ST, V> QueryFragment<Pg> for Bound<Q, ST, V>
where
    Q: QueryFragment<Pg> + Pieces,
    Pg: HasSqlType<ST>,
    V: ToSql<ST, Pg>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.query.walk_ast(out.reborrow())?;
        out.push_bind_param::<ST, V>(&self.value)?;
        out.push_sql(piece(self.query.sql(), Q::COUNT + 1));
        Ok(())
    }
}

impl QueryId for Prepared {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q, ST, V> QueryId for Bound<Q, ST, V> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl Query for Prepared {
    type SqlType = Untyped;
}

impl<Q, ST, V> Query for Bound<Q, ST, V> {
    type SqlType = Untyped;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_is_cut_at_its_placeholders() {
        let sql = "SELECT $1 + x FROM t WHERE y = $2";
        assert_eq!(piece(sql, 0), "SELECT ");
        assert_eq!(piece(sql, 1), " + x FROM t WHERE y = ");
        assert_eq!(piece(sql, 2), "");
        assert_eq!(placeholders(sql), vec![1, 2]);
        assert_eq!(placeholders("$10 and $2"), vec![10, 2]);
    }

    #[test]
    fn the_prepared_statements_use_each_parameter_once_in_order() {
        for (name, sql, count) in [
            ("claim", super::super::super::leases::claim::claim_sql(), 11),
            (
                "end many",
                super::super::super::leases::finish_many::END_MANY_SQL,
                21,
            ),
            (
                "pause many",
                super::super::super::leases::finish_many::PAUSE_MANY_SQL,
                5,
            ),
            ("take tokens", super::super::super::rates::rate::TAKE_SQL, 5),
            (
                "hand back",
                super::super::super::leases::lease::HAND_BACK_SQL,
                4,
            ),
        ] {
            assert_eq!(placeholders(sql), (1..=count).collect::<Vec<_>>(), "{name}");
        }
    }
}
