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

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::LazyLock;

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{HasSqlType, Untyped};
use diesel::QueryResult;
use parking_lot::RwLock;

/// A statement's text, to be followed by its binds in order.
pub(in crate::store::postgres) fn prepared(sql: &'static str) -> Prepared {
    Prepared {
        pieces: pieces_of(sql),
    }
}

#[derive(Debug, Clone, Copy)]
pub(in crate::store::postgres) struct Prepared {
    pieces: Cut,
}

/// Each statement's pieces, cut once per process. diesel walks a
/// statement several times a run (its text is the key it is prepared
/// under, then its binds), and cutting the claim's 15 kB anew at each
/// piece of each walk took 2.5 % of the runtime's thread in a drain
/// (docs/benchmarks.md, "The runtime's thread"). One entry per statement
/// text in the code, so the pieces, leaked, are a few kilobytes for the
/// life of the process.
static PIECES: LazyLock<RwLock<HashMap<TextAt, Cut>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

/// A statement's text by where it lies and how long it is: each is a
/// constant, so this names it without hashing 15 kB.
type TextAt = (usize, usize);

/// A statement's pieces, in order.
type Cut = &'static [&'static str];

fn pieces_of(sql: &'static str) -> Cut {
    let key = (sql.as_ptr() as usize, sql.len());
    if let Some(pieces) = PIECES.read().get(&key) {
        return pieces;
    }
    let mut cut = Vec::new();
    let mut rest = sql;
    while let Some((start, end)) = placeholder(rest) {
        cut.push(&rest[..start]);
        rest = &rest[end..];
    }
    cut.push(rest);
    PIECES
        .write()
        .entry(key)
        .or_insert_with(|| Box::leak(cut.into_boxed_slice()))
}

/// The text before the `index`th placeholder (0: before the first) or, for
/// the last index, after the last placeholder; empty past the end.
fn piece(pieces: &[&'static str], index: usize) -> &'static str {
    pieces.get(index).copied().unwrap_or("")
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
    fn pieces(&self) -> Cut;
}

impl Pieces for Prepared {
    const COUNT: usize = 0;
    fn pieces(&self) -> Cut {
        self.pieces
    }
}

impl<Q: Pieces, ST, V> Pieces for Bound<Q, ST, V> {
    const COUNT: usize = Q::COUNT + 1;
    fn pieces(&self) -> Cut {
        self.query.pieces()
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
        out.push_sql(piece(self.pieces, 0));
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
        out.push_sql(piece(self.query.pieces(), Q::COUNT + 1));
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
        let pieces = pieces_of(sql);
        assert_eq!(piece(pieces, 0), "SELECT ");
        assert_eq!(piece(pieces, 1), " + x FROM t WHERE y = ");
        assert_eq!(piece(pieces, 2), "");
        assert_eq!(piece(pieces, 3), "");
        assert!(std::ptr::eq(pieces, pieces_of(sql)), "cut once");
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
