//! The console's reads on SQLite (see `store::console`). Instants are
//! microseconds; each search condition is written only when its field is
//! set, and a state as a literal, so the partial indexes apply.

use std::collections::HashMap;

use diesel::sql_types::{BigInt, Double, Nullable, Text};
use diesel::sqlite::{Sqlite, SqliteConnection};
use diesel::{QueryableByName, RunQueryDsl};

use super::rows::{
    self, instant, micros, DestinationRow, TaskRow, DESTINATION_COLUMNS, TASK_COLUMNS,
};
use super::store::SqliteStore;
use crate::domain::{Region, TaskId};
use crate::store::contract::console::{
    empty_hour, page, Activity, DestinationSummary, LearnedQuota, TaskFilter, TaskPage,
};
use crate::store::contract::{Latency, StoreError};

enum Param {
    Text(String),
    Int(i64),
}

fn search_sql(
    region: Region,
    filter: &TaskFilter,
    before: Option<TaskId>,
    limit: i64,
) -> (String, Vec<Param>) {
    let mut sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE region = ?");
    let mut params = vec![Param::Text(region.to_string())];
    let mut and = |condition: String, param: Option<Param>| {
        sql.push_str(" AND ");
        sql.push_str(&condition);
        params.extend(param);
    };
    if let Some(id) = filter.id {
        and("id = ?".into(), Some(Param::Text(id.0.to_string())));
    }
    if let Some(tenant) = &filter.tenant {
        and(
            "tenant_id = ?".into(),
            Some(Param::Text(tenant.to_string())),
        );
    }
    if let Some(reminder) = &filter.reminder {
        and(
            "reminder_id = ?".into(),
            Some(Param::Text(reminder.to_string())),
        );
    }
    if let Some(destination) = &filter.destination {
        and(
            "destination_id = ?".into(),
            Some(Param::Text(destination.to_string())),
        );
    }
    if let Some(state) = filter.state {
        // A label of the domain's, never the caller's text.
        and(format!("state = '{}'", state.as_str()), None);
    }
    if let Some(from) = filter.from {
        and("not_before >= ?".into(), Some(Param::Int(micros(from))));
    }
    if let Some(until) = filter.until {
        and("not_before < ?".into(), Some(Param::Int(micros(until))));
    }
    if let Some(tenants) = &filter.only_tenants {
        let marks = vec!["?"; tenants.len()].join(", ");
        sql.push_str(&format!(" AND tenant_id IN ({marks})"));
        params.extend(tenants.iter().map(|t| Param::Text(t.to_string())));
    }
    if let Some(before) = before {
        sql.push_str(" AND id < ?");
        params.push(Param::Text(before.0.to_string()));
    }
    sql.push_str(" ORDER BY id DESC LIMIT ?");
    params.push(Param::Int(limit));
    (sql, params)
}

#[derive(QueryableByName)]
struct SummaryRow {
    #[diesel(sql_type = Text)]
    destination: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    quota_limit: Option<i64>,
    #[diesel(sql_type = Nullable<Double>)]
    quota_remaining: Option<f64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    quota_resets_at: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    quota_learned_at: Option<i64>,
    #[diesel(sql_type = BigInt)]
    in_flight: i64,
    #[diesel(sql_type = BigInt)]
    due_backlog: i64,
    #[diesel(sql_type = BigInt)]
    rate_limited: i64,
    #[diesel(sql_type = BigInt)]
    failed: i64,
    #[diesel(sql_type = BigInt)]
    retrying: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    oldest_due: Option<i64>,
}

/// Each destination of the region (?2) with its counts at ?1; each count
/// reads the partial index of its states (`tasks_due`,
/// `tasks_expired_leases`, `tasks_tenant_turns`, `attempts_rate_limited`)
/// or the failure log (`task_failures_by_time`, replayed failures
/// included).
/// SQLite uses a partial index only for a query that repeats its WHERE
/// clause, hence `state IN ('delivered', 'failed', 'cancelled')` beside
/// `state = 'failed'` here and in the activity's reads. A row whose change
/// waits for its attempt is no claim's, so not in the due backlog.
const SUMMARIES_SQL: &str = "SELECT d.id AS destination, d.quota_limit, d.quota_remaining, \
       d.quota_resets_at, d.quota_learned_at, \
       (SELECT count(*) FROM tasks t WHERE t.destination_id = d.id AND t.state = 'leased') \
         AS in_flight, \
       (SELECT count(*) FROM tasks t WHERE t.destination_id = d.id \
          AND t.state IN ('pending', 'retry_wait') AND t.available_at <= ?1 \
          AND t.not_before <= ?1 AND t.waiting_change IS NULL) AS due_backlog, \
       (SELECT count(*) FROM attempts a JOIN tasks t ON t.id = a.task_id \
          WHERE a.http_status = 429 AND a.recorded_at > ?1 - 3600000000 \
            AND a.recorded_at <= ?1 AND t.destination_id = d.id) AS rate_limited, \
       (SELECT count(*) FROM task_failures f WHERE f.region = d.region \
          AND f.failed_at > ?1 - 3600000000 AND f.failed_at <= ?1 \
          AND f.destination_id = d.id) AS failed, \
       (SELECT count(*) FROM tasks t WHERE t.region = d.region AND t.destination_id = d.id \
          AND t.finalized_at IS NULL \
          AND (t.state = 'retry_wait' \
               OR (t.state = 'leased' AND t.attempt_count - 1 > t.attempts_before_replay))) \
         AS retrying, \
       (SELECT min(t.not_before) FROM tasks t WHERE t.region = d.region \
          AND t.destination_id = d.id AND t.finalized_at IS NULL AND t.not_before <= ?1) \
         AS oldest_due \
     FROM destinations d WHERE d.region = ?2 AND d.deleted_at IS NULL ORDER BY d.id";

#[derive(QueryableByName)]
struct MinuteRow {
    #[diesel(sql_type = BigInt)]
    minute: i64,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Lateness {
    #[diesel(sql_type = BigInt)]
    minute: i64,
    #[diesel(sql_type = BigInt)]
    micros: i64,
}

#[derive(QueryableByName)]
struct ReasonCount {
    #[diesel(sql_type = Text)]
    reason: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// The minute (0 = oldest, 59 = the one ending at ?1) of an instant of
/// the window (?1 - 1 hour, ?1].
macro_rules! minute_of {
    ($at:literal) => {
        concat!(
            "((",
            $at,
            " - (?1 - 3600000000) + 59999999) / 60000000 - 1)"
        )
    };
}

impl SqliteStore {
    pub(super) async fn search_tasks(
        &self,
        region: Region,
        filter: TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, StoreError> {
        self.run(false, move |conn, _| {
            let (sql, params) = search_sql(region, &filter, before, i64::from(limit) + 1);
            let mut query = diesel::sql_query(sql).into_boxed::<Sqlite>();
            for param in params {
                query = match param {
                    Param::Text(t) => query.bind::<Text, _>(t),
                    Param::Int(n) => query.bind::<BigInt, _>(n),
                };
            }
            let found: Vec<TaskRow> = query.load(conn)?;
            Ok(page(rows::tasks(found)?, limit))
        })
        .await
    }

    pub(super) async fn destination_summaries(
        &self,
        region: Region,
    ) -> Result<Vec<DestinationSummary>, StoreError> {
        self.run(false, move |conn, ctx| {
            diesel::Connection::transaction(conn, |conn| summaries(conn, region, micros(ctx.now)))
        })
        .await
    }

    pub(super) async fn activity(&self, region: Region) -> Result<Activity, StoreError> {
        self.run(false, move |conn, ctx| {
            let now = ctx.now;
            diesel::Connection::transaction(conn, |conn| activity(conn, region, now))
        })
        .await
    }
}

fn summaries(
    conn: &mut SqliteConnection,
    region: Region,
    now: i64,
) -> Result<Vec<DestinationSummary>, StoreError> {
    let destinations: Vec<DestinationRow> = diesel::sql_query(format!(
        "SELECT {DESTINATION_COLUMNS} FROM destinations WHERE region = ? \
         AND deleted_at IS NULL ORDER BY id"
    ))
    .bind::<Text, _>(region.as_str())
    .load(conn)?;
    let counts: Vec<SummaryRow> = diesel::sql_query(SUMMARIES_SQL)
        .bind::<BigInt, _>(now)
        .bind::<Text, _>(region.as_str())
        .load(conn)?;
    let mut counts: HashMap<String, SummaryRow> = counts
        .into_iter()
        .map(|c| (c.destination.clone(), c))
        .collect();
    destinations
        .iter()
        .map(|row| {
            let destination = row.destination()?;
            let c = counts.remove(&row.id);
            let learned_quota = match &c {
                Some(SummaryRow {
                    quota_remaining: Some(remaining),
                    quota_resets_at: Some(resets_at),
                    quota_learned_at: Some(learned_at),
                    quota_limit,
                    ..
                }) => Some(LearnedQuota {
                    limit: *quota_limit,
                    remaining: *remaining,
                    resets_at: instant("destinations.quota_resets_at", *resets_at)?,
                    learned_at: instant("destinations.quota_learned_at", *learned_at)?,
                }),
                _ => None,
            };
            Ok(DestinationSummary {
                destination,
                learned_quota,
                in_flight: c.as_ref().map_or(0, |c| c.in_flight),
                due_backlog: c.as_ref().map_or(0, |c| c.due_backlog),
                rate_limited_last_hour: c.as_ref().map_or(0, |c| c.rate_limited),
                failed_last_hour: c.as_ref().map_or(0, |c| c.failed),
                retrying: c.as_ref().map_or(0, |c| c.retrying),
                oldest_due: match c.as_ref().and_then(|c| c.oldest_due) {
                    Some(at) => Some(instant("tasks.not_before", at)?),
                    None => None,
                },
            })
        })
        .collect()
}

fn activity(
    conn: &mut SqliteConnection,
    region: Region,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Activity, StoreError> {
    let at = micros(now);
    let counts: Vec<MinuteRow> = diesel::sql_query(concat!(
        "SELECT ",
        minute_of!("finalized_at"),
        " AS minute, 'delivered' AS kind, count(*) AS n FROM tasks \
         WHERE region = ?2 AND state IN ('delivered', 'failed', 'cancelled') \
           AND state = 'delivered' \
           AND finalized_at > ?1 - 3600000000 AND finalized_at <= ?1 \
         GROUP BY 1 \
         UNION ALL SELECT ",
        minute_of!("failed_at"),
        " AS minute, 'failed' AS kind, count(*) AS n FROM task_failures \
         WHERE region = ?2 AND failed_at > ?1 - 3600000000 AND failed_at <= ?1 \
         GROUP BY 1 \
         UNION ALL SELECT ",
        minute_of!("a.recorded_at"),
        " AS minute, 'rate_limited' AS kind, count(*) AS n \
         FROM attempts a JOIN tasks t ON t.id = a.task_id \
         WHERE a.http_status = 429 AND a.recorded_at > ?1 - 3600000000 \
           AND a.recorded_at <= ?1 AND t.region = ?2 \
         GROUP BY 1"
    ))
    .bind::<BigInt, _>(at)
    .bind::<Text, _>(region.as_str())
    .load(conn)?;
    let lateness: Vec<Lateness> = diesel::sql_query(concat!(
        "SELECT ",
        minute_of!("finalized_at"),
        " AS minute, delivered_at - not_before AS micros FROM tasks \
         WHERE region = ?2 AND state IN ('delivered', 'failed', 'cancelled') \
           AND state = 'delivered' \
           AND finalized_at > ?1 - 3600000000 AND finalized_at <= ?1"
    ))
    .bind::<BigInt, _>(at)
    .bind::<Text, _>(region.as_str())
    .load(conn)?;
    let failures: Vec<ReasonCount> = diesel::sql_query(
        "SELECT failure_reason AS reason, count(*) AS n FROM task_failures \
         WHERE region = ?2 AND failed_at > ?1 - 3600000000 AND failed_at <= ?1 \
         GROUP BY failure_reason ORDER BY n DESC, failure_reason",
    )
    .bind::<BigInt, _>(at)
    .bind::<Text, _>(region.as_str())
    .load(conn)?;
    let mut minutes = empty_hour(now);
    for row in counts {
        let Some(m) = usize::try_from(row.minute)
            .ok()
            .and_then(|i| minutes.get_mut(i))
        else {
            continue;
        };
        match row.kind.as_str() {
            "delivered" => m.delivered = row.n,
            "failed" => m.failed = row.n,
            "rate_limited" => m.rate_limited = row.n,
            _ => {}
        }
    }
    let mut samples: Vec<Vec<i64>> = vec![Vec::new(); minutes.len()];
    for sample in lateness {
        if let Some(s) = usize::try_from(sample.minute)
            .ok()
            .and_then(|i| samples.get_mut(i))
        {
            s.push(sample.micros);
        }
    }
    for (m, s) in minutes.iter_mut().zip(samples) {
        m.deadline_to_delivery = Latency::of(s);
    }
    Ok(Activity {
        now,
        minutes,
        failures_by_reason: failures.into_iter().map(|r| (r.reason, r.n)).collect(),
    })
}
