//! The resolver awc connects through: it resolves a destination's host and
//! hands back only the addresses the send policy permits, so the address
//! that was checked is the address that is connected to.

use std::net::SocketAddr;
use std::sync::Arc;

use actix_tls::connect::{Connector, ConnectorService, Resolve, Resolver};
use futures_util::future::LocalBoxFuture;

use super::policy::{Egress, ResolveError};

/// [`Egress::resolve`] as awc's resolver. A refusal is returned as a boxed
/// [`super::Refusal`], so the transport can tell it from a failed lookup.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    egress: Arc<Egress>,
}

impl GuardedResolver {
    pub fn new(egress: Arc<Egress>) -> Self {
        Self { egress }
    }
}

impl Resolve for GuardedResolver {
    fn lookup<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> LocalBoxFuture<'a, Result<Vec<SocketAddr>, Box<dyn std::error::Error>>> {
        Box::pin(async move {
            self.egress
                .resolve(host, port)
                .await
                .map_err(|e| -> Box<dyn std::error::Error> {
                    match e {
                        ResolveError::Refused(refusal) => Box::new(refusal),
                        lookup => Box::new(lookup),
                    }
                })
        })
    }
}

/// The TCP connector for `awc::Connector::connector`, resolving through
/// the send policy.
pub fn tcp_connector(egress: Arc<Egress>) -> ConnectorService {
    Connector::new(Resolver::custom(GuardedResolver::new(egress))).service()
}
