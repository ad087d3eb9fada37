//! The send policy parsed ([`Egress`]): which addresses and schemes it
//! admits, and why it refuses the others.

use std::net::{IpAddr, SocketAddr};

use remit::domain::InvalidInput;
use remit::policy::{blocked, Blocked};

use super::allowlist::AllowList;

/// The parsed send policy; cheap to share behind an `Arc`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Egress {
    allow: AllowList,
    allow_plain_http: bool,
}

/// Why a destination may not be sent to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("{address} is {why}; list it in send.allow_hosts if it is meant to be reached")]
    Address { address: IpAddr, why: Blocked },
    #[error(
        "{host} resolves only to refused addresses ({address} is {why}); list the host or \
         its network in send.allow_hosts if it is meant to be reached"
    )]
    Host {
        host: String,
        address: IpAddr,
        why: Blocked,
    },
    #[error(
        "plain http would carry webhooks in clear; use https, list the host in \
         send.allow_hosts, or set send.allow_plain_http = true"
    )]
    PlainHttp,
}

/// Why a host name led to no address that may be connected to.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error("could not resolve {host}")]
    Lookup {
        host: String,
        #[source]
        source: std::io::Error,
    },
}

impl Egress {
    pub fn new(allow: AllowList, allow_plain_http: bool) -> Self {
        Self {
            allow,
            allow_plain_http,
        }
    }

    /// What the URL alone decides: its scheme, and its host when that is an
    /// address. A literal address never reaches the resolver, so this is
    /// also checked before every request.
    pub fn check_url(&self, url: &url::Url) -> Result<(), Refusal> {
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            Some(url::Host::Domain(_)) | None => None,
        };
        if url.scheme() == "http" && !self.allow_plain_http {
            let listed = match (literal, url.host_str()) {
                (Some(ip), _) => self.allow.allows_address(ip),
                (None, Some(host)) => self.allow.allows_host(host),
                (None, None) => false,
            };
            if !listed {
                return Err(Refusal::PlainHttp);
            }
        }
        match literal {
            Some(address) => self
                .check_address(address)
                .map_err(|why| Refusal::Address { address, why }),
            None => Ok(()),
        }
    }

    /// The addresses of `host` that may be connected to: all of them when
    /// the host is listed by name, else those outside the refused ranges or
    /// inside a listed network. None left is a refusal.
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, ResolveError> {
        // An IPv6 literal arrives with its brackets.
        let bare = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let lookup_error = |source| ResolveError::Lookup {
            host: bare.to_owned(),
            source,
        };
        let addresses: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((bare, port))
                .await
                .map_err(lookup_error)?
                .collect(),
        };
        if self.allow.allows_host(bare) {
            return Ok(addresses);
        }
        let mut refused = None;
        let permitted: Vec<SocketAddr> = addresses
            .into_iter()
            .filter(|a| match self.check_address(a.ip()) {
                Ok(()) => true,
                Err(why) => {
                    refused.get_or_insert((a.ip(), why));
                    false
                }
            })
            .collect();
        match (permitted.is_empty(), refused) {
            (false, _) => Ok(permitted),
            (true, Some((address, why))) => Err(Refusal::Host {
                host: bare.to_owned(),
                address,
                why,
            }
            .into()),
            (true, None) => Err(lookup_error(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no addresses",
            ))),
        }
    }

    /// Whether a new destination's URL may be registered, as an error on
    /// the field `url` naming what was refused and why. A name that does not
    /// resolve (yet) is accepted: the check at connect time still applies.
    pub async fn admit(&self, url: &url::Url) -> Result<(), InvalidInput> {
        let refuse = |why: Refusal| InvalidInput::new("url", format!("{url} is refused: {why}"));
        self.check_url(url).map_err(refuse)?;
        if let Some(url::Host::Domain(host)) = url.host() {
            let port = url.port_or_known_default().unwrap_or(443);
            match self.resolve(host, port).await {
                Ok(_) | Err(ResolveError::Lookup { .. }) => {}
                Err(ResolveError::Refused(why)) => return Err(refuse(why)),
            }
        }
        Ok(())
    }

    /// Refuses an address in a blocked range unless a listed network holds
    /// it.
    fn check_address(&self, ip: IpAddr) -> Result<(), Blocked> {
        if self.allow.allows_address(ip) {
            return Ok(());
        }
        blocked(ip).map_or(Ok(()), Err)
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
