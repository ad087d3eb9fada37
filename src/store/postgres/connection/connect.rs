//! Opening a connection to PostgreSQL: every connection remit makes (the
//! pool's, the LISTEN connection, migrations, sandboxes) comes from a
//! [`PgConnector`], which speaks TLS as the URL asks (`tls`), speaks to a
//! pooler as `database.pooler` says (`pooler`), and names why a connection
//! could not be opened ([`ConnectFailure`]).

use std::error::Error as _;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use futures_util::FutureExt;
use tokio_postgres::config::{Host, SslMode as WireMode};
use tokio_postgres::error::SqlState;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::connect_failure::{self, ConnectFailure, PoolerError, TlsFailure};
use super::pooler::{self, Pooler};
use super::tls::{self, SslMode};
use crate::store::contract::{DatabaseUrl, StoreError};

/// Opens connections to one database URL. Cheap to clone.
#[derive(Clone)]
pub struct PgConnector {
    config: Arc<tokio_postgres::Config>,
    mode: SslMode,
    tls: MakeRustlsConnect,
    /// The URL without its password, for messages.
    described: Arc<str>,
    timeout: Duration,
    pooler: Pooler,
    /// The session settings remit asks for (`name`, `value`) where the
    /// startup packet cannot carry them: behind a pooler (`asking`).
    settings: Arc<[(String, String)]>,
}

impl std::fmt::Debug for PgConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.described)
    }
}

/// Asks the server, in the startup packet, for `setting` (`name=value`)
/// in this session, unless the URL's own options set `name`: those come
/// first, and theirs wins.
fn ask_for(config: &mut tokio_postgres::Config, setting: &str) {
    let given = config.get_options().unwrap_or("").to_owned();
    let name = setting.split('=').next().unwrap_or(setting);
    if given.contains(&format!("{name}=")) || given.contains(&format!("{name} =")) {
        return;
    }
    let options = if given.is_empty() {
        format!("-c {setting}")
    } else {
        format!("{given} -c {setting}")
    };
    config.options(&options);
}

impl PgConnector {
    /// Reads `url`'s connection and TLS settings (and the files these
    /// name). A connection attempt gives up after `timeout`.
    pub fn new(url: &str, timeout: Duration) -> Result<Self, StoreError> {
        Self::behind(url, timeout, Pooler::None)
    }

    /// As [`PgConnector::new`], for a URL that reaches PostgreSQL through
    /// `pooler`. Behind a pooler no session setting is asked for at
    /// connect (PgBouncer refuses the startup parameter `options`, so a URL
    /// with its own is refused); behind a transaction pooler each
    /// connection sends its statements unnamed and warms its type cache
    /// (`pooler`).
    pub fn behind(url: &str, timeout: Duration, pooler: Pooler) -> Result<Self, StoreError> {
        let described: Arc<str> = DatabaseUrl::Postgres(url.to_owned()).describe().into();
        let failed = |cause| StoreError::Connect {
            url: described.to_string(),
            cause: Box::new(cause),
        };
        let (wire_url, settings) =
            tls::split_url(url).map_err(|e| failed(ConnectFailure::Settings(e)))?;
        let tls = settings
            .client_config()
            .map_err(|e| failed(ConnectFailure::Settings(e)))?;
        let mut config = wire_url
            .parse::<tokio_postgres::Config>()
            .map_err(|e| failed(ConnectFailure::Url(e)))?;
        // Each host of a URL that names several (a primary and its
        // standby) gets the whole timeout to answer a connect, as libpq's
        // connect_timeout does: a first host that has gone silent (its
        // address dropping packets after a failover) is given up for the
        // next rather than spending the timeout of them all.
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(timeout);
        }
        if pooler != Pooler::None && config.get_options().is_some() {
            return Err(StoreError::Pooler(Box::new(PoolerError::OptionsInUrl)));
        }
        Ok(Self {
            config: Arc::new(config),
            mode: settings.mode(),
            tls: MakeRustlsConnect::new(tls),
            described: described.clone(),
            timeout,
            pooler,
            settings: Arc::new([]),
        }
        // Every statement remit runs is short; on a server where `jit = on`
        // (Debian's default, and many managed services') a statement the
        // planner overestimates is compiled by LLVM for seconds before it
        // runs for milliseconds. The statements are written to stay under
        // `jit_above_cost` with a stock server's settings
        // (`tests/store/hot_path_plans.rs`); this is insurance.
        .asking("jit=off"))
    }

    /// Asks for the session setting `setting` (`name=value`) on every
    /// connection this connector opens: in the startup packet to
    /// PostgreSQL itself (unless the URL's own options set it); with `SET`
    /// once open through a session pooler (the session is the
    /// connection's until it closes, and the pooler resets it then);
    /// through a transaction pooler, where no session is the client's,
    /// with `SET LOCAL` in a transaction of each statement's own, sent with
    /// it in one round trip (the vendored diesel-async's
    /// `set_unnamed_statement_settings`), so the server plans each run
    /// with them and they never reach another client of the same server.
    fn asking(mut self, setting: &str) -> Self {
        if self.pooler == Pooler::None {
            let mut config = (*self.config).clone();
            ask_for(&mut config, setting);
            self.config = Arc::new(config);
        } else {
            let (name, value) = setting.split_once('=').unwrap_or((setting, ""));
            let mut settings = self.settings.to_vec();
            settings.push((name.to_owned(), value.to_owned()));
            self.settings = settings.into();
        }
        self
    }

    /// The settings as `SET` (or `SET LOCAL`) statements, one string.
    fn settings_as(&self, set: &str) -> String {
        self.settings
            .iter()
            .map(|(name, value)| format!("{set} {name} = {value}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The connector of a store's pool, whose sessions also plan without
    /// sequential scans where an index serves.
    ///
    /// A prepared statement settles on a generic plan after five runs and
    /// keeps it until a table it reads is analyzed. Planned while
    /// `task_queue` was empty (a new install, a drained queue), that plan
    /// reads the queue from end to end at every step of the claim's walk,
    /// and a bulk schedule of 300,000 reminders made each claim take 12 s
    /// until autovacuum analyzed the queue, up to a minute later
    /// (`tests/store/empty_start.rs`). No statement of remit's wants a
    /// sequential scan of a table that can grow (the plan tests hold
    /// this), and where no index serves the planner still takes one.
    /// Migrations and sandboxes keep the server's setting. Behind a
    /// transaction pooler each run is planned with it, for the tables as
    /// they are then (`asking`).
    pub fn for_store(self) -> Self {
        self.asking("enable_seqscan=off")
    }

    /// The same connector whose connections plan each prepared statement
    /// once, without its values (`plan_cache_mode=force_generic_plan`), for
    /// the pool delivery runs on. Left to itself, PostgreSQL plans a
    /// prepared statement afresh at every run while that plan is estimated
    /// cheaper than the generic one: for the claim and the finish, every
    /// run. That planning was a fifth of the server's CPU in a drain of one
    /// destination (docs/benchmarks.md, "Planned once"). The hot path's
    /// generic plans are the ones the plan tests check
    /// (`tests/store/hot_path_plans.rs` plans each statement both ways).
    /// Behind a transaction pooler no statement is kept to plan once
    /// (the setting is harmless there).
    pub fn with_generic_plans(&self) -> Self {
        self.clone().asking("plan_cache_mode=force_generic_plan")
    }

    /// The URL without its password.
    pub fn describe(&self) -> &str {
        &self.described
    }

    /// What stands between this connector and PostgreSQL.
    pub fn pooler(&self) -> Pooler {
        self.pooler
    }

    /// Opens one connection, or says why it could not.
    pub async fn establish(&self) -> Result<AsyncPgConnection, StoreError> {
        self.connect().await.map_err(|cause| StoreError::Connect {
            url: self.described.to_string(),
            cause: Box::new(cause),
        })
    }

    /// A bb8 manager whose connections this connector opens.
    pub fn manager(&self) -> AsyncDieselConnectionManager<AsyncPgConnection> {
        let connector = self.clone();
        let mut config = ManagerConfig::default();
        config.custom_setup = Box::new(move |_url| {
            let connector = connector.clone();
            async move {
                connector.connect().await.map_err(|cause| {
                    diesel::ConnectionError::BadConnection(crate::error_chain(&cause))
                })
            }
            .boxed()
        });
        AsyncDieselConnectionManager::new_with_config(self.described.to_string(), config)
    }

    async fn connect(&self) -> Result<AsyncPgConnection, ConnectFailure> {
        match self.mode {
            SslMode::Disable => self.attempt(WireMode::Disable).await,
            // Plaintext first; TLS only if the server turns plaintext away.
            SslMode::Allow => match self.attempt(WireMode::Disable).await {
                Err(first @ ConnectFailure::Authentication(_)) => {
                    self.attempt(WireMode::Require).await.map_err(|_| first)
                }
                other => other,
            },
            // TLS if the server offers it (tokio-postgres falls back when it
            // does not); plaintext again if TLS, or the login over TLS,
            // fails. The first failure is the one reported.
            SslMode::Prefer => match self.attempt(WireMode::Prefer).await {
                Err(
                    first @ (ConnectFailure::Tls(_)
                    | ConnectFailure::Authentication(_)
                    | ConnectFailure::Refused(_)),
                ) => self.attempt(WireMode::Disable).await.map_err(|_| first),
                other => other,
            },
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                self.attempt(WireMode::Require).await
            }
        }
    }

    async fn attempt(&self, mode: WireMode) -> Result<AsyncPgConnection, ConnectFailure> {
        let mut config = (*self.config).clone();
        config.ssl_mode(mode);
        // A value fresh to this connection, asked for beside the session
        // settings: no role's or database's default can supply it, so only
        // a startup packet that reached PostgreSQL sets it
        // (`check_options_arrived`).
        let nonce =
            (self.pooler == Pooler::None).then(|| uuid::Uuid::new_v4().simple().to_string());
        if let Some(nonce) = &nonce {
            ask_for(
                &mut config,
                &format!("{}={nonce}", connect_failure::NONCE_SETTING),
            );
        }
        // The hosts (or addresses) are tried in turn, each for its
        // connect timeout; this bounds the whole, the login of a host that
        // answers included, at no less than the store's timeout. (A name
        // that resolves to several addresses is one host here.)
        let hosts = config
            .get_hosts()
            .len()
            .max(config.get_hostaddrs().len())
            .max(1) as u32;
        let per_host = config
            .get_connect_timeout()
            .copied()
            .unwrap_or(self.timeout);
        let whole = (per_host * hosts).max(self.timeout);
        let (client, connection) = tokio::time::timeout(whole, config.connect(self.tls.clone()))
            .await
            .map_err(|_| ConnectFailure::TimedOut(whole))?
            .map_err(|e| match self.classify(e) {
                // The last host's own connect timeout, ending with the whole.
                ConnectFailure::Unreachable(io) if io.kind() == io::ErrorKind::TimedOut => {
                    ConnectFailure::TimedOut(per_host)
                }
                other => other,
            })?;
        let mut conn = AsyncPgConnection::try_from_client_and_connection(client, connection)
            .await
            .map_err(ConnectFailure::Setup)?;
        if let Some(nonce) = &nonce {
            check_options_arrived(&mut conn, nonce).await?;
        }
        if self.pooler == Pooler::Session && !self.settings.is_empty() {
            conn.batch_execute(&self.settings_as("SET"))
                .await
                .map_err(ConnectFailure::SessionSettings)?;
        }
        if self.pooler == Pooler::Transaction {
            conn.set_unnamed_statements(true);
            pooler::warm_up(&mut conn)
                .await
                .map_err(ConnectFailure::WarmUp)?;
            // After the warm-up, which runs in a transaction of its own.
            if !self.settings.is_empty() {
                conn.set_unnamed_statement_settings(Some(&self.settings_as("SET LOCAL")));
            }
        }
        Ok(conn)
    }

    /// Names the cause of a failed connection. tokio-postgres keeps its
    /// error kinds private, so a TLS failure is told by its message and
    /// its cause: the rustls error under the I/O error.
    fn classify(&self, e: tokio_postgres::Error) -> ConnectFailure {
        if let Some(db) = e.as_db_error() {
            let db = db.clone();
            return if *db.code() == SqlState::INVALID_CATALOG_NAME {
                ConnectFailure::UnknownDatabase(db)
            } else if *db.code() == SqlState::PROTOCOL_VIOLATION
                && db
                    .message()
                    .contains("unsupported startup parameter: options")
            {
                ConnectFailure::PoolerRefusedOptions(db)
            } else if db.code().code().starts_with("28") {
                ConnectFailure::Authentication(db)
            } else {
                ConnectFailure::Refused(db)
            };
        }
        let tls_stage = e.to_string() == "error performing TLS handshake";
        let not_offered = e
            .source()
            .is_some_and(|cause| cause.to_string().contains("does not support TLS"));
        if tls_stage && not_offered {
            return ConnectFailure::Tls(TlsFailure::NotOffered(self.mode));
        }
        let Some(io) = e.source().and_then(|s| s.downcast_ref::<io::Error>()) else {
            return if tls_stage {
                ConnectFailure::Tls(TlsFailure::Other(e))
            } else {
                ConnectFailure::Other(e)
            };
        };
        if let Some(rustls) = io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        {
            return ConnectFailure::Tls(self.tls_failure(rustls.clone()));
        }
        ConnectFailure::Unreachable(io::Error::new(io.kind(), io.to_string()))
    }

    fn tls_failure(&self, e: rustls::Error) -> TlsFailure {
        use rustls::{AlertDescription as Alert, CertificateError as Cert};
        match &e {
            rustls::Error::InvalidCertificate(Cert::UnknownIssuer) => TlsFailure::UnknownCa(e),
            rustls::Error::InvalidCertificate(Cert::NotValidForName) => TlsFailure::WrongHost {
                host: self.host(),
                presented: String::new(),
            },
            rustls::Error::InvalidCertificate(Cert::NotValidForNameContext {
                presented, ..
            }) => TlsFailure::WrongHost {
                host: self.host(),
                presented: presented
                    .iter()
                    .map(|name| plain_name(name))
                    .collect::<Vec<_>>()
                    .join(", "),
            },
            rustls::Error::InvalidCertificate(_) => TlsFailure::BadCertificate(e),
            rustls::Error::AlertReceived(
                Alert::CertificateRequired
                | Alert::BadCertificate
                | Alert::UnknownCA
                | Alert::CertificateUnknown
                | Alert::CertificateExpired
                | Alert::CertificateRevoked
                | Alert::UnsupportedCertificate,
            ) => TlsFailure::ClientCertificateRefused(e),
            _ => TlsFailure::Handshake(e),
        }
    }

    fn host(&self) -> String {
        match self.config.get_hosts().first() {
            Some(Host::Tcp(host)) => host.clone(),
            _ => "(none)".to_owned(),
        }
    }
}

/// A certificate name as rustls lists it (`DnsName("localhost")`), as a
/// person reads it (`localhost`).
fn plain_name(listed: &str) -> &str {
    listed
        .split_once("(\"")
        .and_then(|(_, rest)| rest.strip_suffix("\")"))
        .unwrap_or(listed)
}

#[derive(QueryableByName)]
struct Arrived {
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    nonce: Option<String>,
}

/// Checks that a new connection to PostgreSQL itself got the value its
/// startup packet asked for `NONCE_SETTING` (`sent`): only PostgreSQL
/// itself can have set it. Sent as one unnamed statement, which any pooler
/// carries, so a transaction pooler is named here rather than by the
/// prepared-statement errors it would cause later.
async fn check_options_arrived(
    conn: &mut AsyncPgConnection,
    sent: &str,
) -> Result<(), ConnectFailure> {
    conn.set_unnamed_statements(true);
    let read = diesel::sql_query(format!(
        "SELECT current_setting('{}', true) AS nonce",
        connect_failure::NONCE_SETTING
    ))
    .get_result::<Arrived>(conn)
    .await;
    conn.set_unnamed_statements(false);
    let arrived = read.map_err(ConnectFailure::Check)?;
    if arrived.nonce.as_deref() == Some(sent) {
        return Ok(());
    }
    Err(ConnectFailure::Pooler(PoolerError::OptionsDropped {
        found: arrived.nonce.filter(|v| !v.is_empty()),
    }))
}
