//! What every process sets up first: the TLS crypto provider awc needs,
//! and the signals that stop it.

/// awc with rustls needs a process-wide crypto provider, even for http://.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// SIGTERM and SIGINT, caught from the moment they are installed.
pub(crate) struct Signals {
    streams: Option<(
        actix_rt::signal::unix::Signal,
        actix_rt::signal::unix::Signal,
    )>,
}

impl Signals {
    pub(crate) fn install() -> Self {
        use actix_rt::signal::unix::{signal, SignalKind};
        let streams = signal(SignalKind::terminate())
            .and_then(|term| Ok((term, signal(SignalKind::interrupt())?)))
            .ok();
        Self { streams }
    }

    pub(crate) async fn next(self) -> &'static str {
        let Some((mut term, mut int)) = self.streams else {
            // No signal handling available: run until killed.
            std::future::pending::<()>().await;
            return "none";
        };
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        }
    }
}
