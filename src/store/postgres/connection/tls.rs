//! TLS to PostgreSQL, read from the database URL as libpq reads it.
//!
//! tokio-postgres understands `sslmode=disable|prefer|require` but neither
//! the verifying modes nor the certificate files, so remit takes these
//! parameters out of the URL ([`split_url`]) and turns them into a rustls
//! configuration ([`TlsSettings::client_config`]):
//!
//! | `sslmode`     | encrypted                  | server certificate checked          |
//! | ------------- | -------------------------- | ----------------------------------- |
//! | `disable`     | never                      | no                                  |
//! | `allow`       | only if plaintext is refused | no                                |
//! | `prefer`      | if the server offers TLS (the default) | no                      |
//! | `require`     | always                     | against `sslrootcert` if that file exists |
//! | `verify-ca`   | always                     | signed by a CA in `sslrootcert`     |
//! | `verify-full` | always                     | that, and valid for the host name   |
//!
//! `sslrootcert` defaults to `~/.postgresql/root.crt`; `sslrootcert=system`
//! trusts the Mozilla root store (and, as in libpq, needs `verify-full`,
//! which it then defaults to). `sslcert` and `sslkey` name a client
//! certificate and its key (default `~/.postgresql/postgresql.crt` and
//! `.key`, used when the certificate file exists).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::ServerCertVerifier;
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};

use super::tls_checks::{AnyCertificate, AnyName};

/// How much TLS a connection insists on (libpq's `sslmode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(text: &str) -> Result<Self, TlsSettingsError> {
        Ok(match text {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => return Err(TlsSettingsError::UnknownMode(other.to_owned())),
        })
    }

    fn verifies(self) -> bool {
        matches!(self, SslMode::VerifyCa | SslMode::VerifyFull)
    }
}

impl std::fmt::Display for SslMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        })
    }
}

/// A TLS parameter of the URL that cannot be used, named with its file.
#[derive(Debug, thiserror::Error)]
pub enum TlsSettingsError {
    #[error("sslmode={} is not one of disable, allow, prefer, require, verify-ca, verify-full", crate::domain::quoted(.0))]
    UnknownMode(String),
    #[error("sslmode={mode} checks the server's certificate, but the CA file {} does not exist: set sslrootcert=FILE (or sslrootcert=system), or use a mode that does not check", path.display())]
    NoRootCert { mode: SslMode, path: PathBuf },
    #[error("sslrootcert=system needs sslmode=verify-full, not {0}")]
    WeakModeForSystemRoots(SslMode),
    #[error("could not read {param} file {}", path.display())]
    Read {
        param: &'static str,
        path: PathBuf,
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    #[error("{param} file {} holds no usable certificate", path.display())]
    NoCertificate { param: &'static str, path: PathBuf },
    #[error("the client certificate {} or its key {} was refused", cert.display(), key.display())]
    ClientCertificate {
        cert: PathBuf,
        key: PathBuf,
        #[source]
        source: rustls::Error,
    },
    #[error("could not set up TLS")]
    Setup(#[source] rustls::Error),
    #[error("could not set up the check of the server's certificate")]
    Verifier(#[source] rustls::client::VerifierBuilderError),
}

/// Where the CAs that may sign the server's certificate come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Roots {
    File(PathBuf),
    System,
}

/// The TLS parameters of one database URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    mode: SslMode,
    roots: Roots,
    cert: PathBuf,
    key: PathBuf,
    /// Whether the client certificate was named (a named file must exist;
    /// the default is used only if it does).
    cert_named: bool,
}

/// The parameters remit reads itself; tokio-postgres would refuse them.
const OWN_PARAMETERS: [&str; 4] = ["sslmode", "sslrootcert", "sslcert", "sslkey"];

/// Splits `url` into the URL tokio-postgres gets (remit's parameters
/// removed, every other byte as given) and the TLS settings.
pub fn split_url(url: &str) -> Result<(String, TlsSettings), TlsSettingsError> {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, query),
        None => (url, ""),
    };
    let mut kept = Vec::new();
    let mut own = std::collections::HashMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode(key);
        if OWN_PARAMETERS.contains(&key.as_str()) {
            own.insert(key, decode(value));
        } else {
            kept.push(pair);
        }
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
        .join(".postgresql");
    let roots = match own.get("sslrootcert").map(String::as_str) {
        Some("system") => Roots::System,
        Some(path) => Roots::File(PathBuf::from(path)),
        None => Roots::File(home.join("root.crt")),
    };
    let mode = match own.get("sslmode") {
        Some(mode) => SslMode::parse(mode)?,
        None if roots == Roots::System => SslMode::VerifyFull,
        None => SslMode::Prefer,
    };
    if roots == Roots::System && mode != SslMode::VerifyFull {
        return Err(TlsSettingsError::WeakModeForSystemRoots(mode));
    }
    let settings = TlsSettings {
        mode,
        roots,
        cert: own
            .get("sslcert")
            .map_or_else(|| home.join("postgresql.crt"), PathBuf::from),
        key: own
            .get("sslkey")
            .map_or_else(|| home.join("postgresql.key"), PathBuf::from),
        cert_named: own.contains_key("sslcert"),
    };
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, settings))
}

fn decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("k={text}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

impl TlsSettings {
    pub fn mode(&self) -> SslMode {
        self.mode
    }

    /// The rustls configuration these settings describe: which server
    /// certificates it accepts, and the client certificate it presents.
    pub fn client_config(&self) -> Result<ClientConfig, TlsSettingsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier: Arc<dyn ServerCertVerifier> = match self.roots()? {
            None => Arc::new(AnyCertificate(provider.clone())),
            Some(roots) => {
                let full =
                    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                        .build()
                        .map_err(TlsSettingsError::Verifier)?;
                if self.mode == SslMode::VerifyFull {
                    full
                } else {
                    Arc::new(AnyName(full))
                }
            }
        };
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(TlsSettingsError::Setup)?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        if !self.cert_named && !self.cert.exists() {
            return Ok(builder.with_no_client_auth());
        }
        let certs = read_all("sslcert", &self.cert)?;
        let key =
            PrivateKeyDer::from_pem_file(&self.key).map_err(|source| TlsSettingsError::Read {
                param: "sslkey",
                path: self.key.clone(),
                source,
            })?;
        builder.with_client_auth_cert(certs, key).map_err(|source| {
            TlsSettingsError::ClientCertificate {
                cert: self.cert.clone(),
                key: self.key.clone(),
                source,
            }
        })
    }

    /// The CAs to check the server's certificate against, or `None` when
    /// the mode checks nothing (as libpq: `require` checks the CA only when
    /// the CA file exists).
    fn roots(&self) -> Result<Option<RootCertStore>, TlsSettingsError> {
        let path = match &self.roots {
            Roots::System => {
                return Ok(Some(RootCertStore {
                    roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
                }))
            }
            Roots::File(path) => path,
        };
        let checks = self.mode.verifies() || (self.mode == SslMode::Require && path.exists());
        if !checks {
            return Ok(None);
        }
        if !path.exists() {
            return Err(TlsSettingsError::NoRootCert {
                mode: self.mode,
                path: path.clone(),
            });
        }
        let mut roots = RootCertStore::empty();
        let (added, _) = roots.add_parsable_certificates(read_all("sslrootcert", path)?);
        if added == 0 {
            return Err(TlsSettingsError::NoCertificate {
                param: "sslrootcert",
                path: path.clone(),
            });
        }
        Ok(Some(roots))
    }
}

fn read_all(
    param: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, TlsSettingsError> {
    let read = |source| TlsSettingsError::Read {
        param,
        path: path.to_owned(),
        source,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(read)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(read)?;
    if certs.is_empty() {
        return Err(TlsSettingsError::NoCertificate {
            param,
            path: path.to_owned(),
        });
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remit_takes_its_parameters_out_and_leaves_the_rest_as_written() {
        let (url, tls) = split_url(
            "postgres://u@db:5432/remit?sslmode=verify-full&options=-c%20search_path%3Dx&sslrootcert=%2Fetc%2Fca.pem",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            url,
            "postgres://u@db:5432/remit?options=-c%20search_path%3Dx"
        );
        assert_eq!(tls.mode(), SslMode::VerifyFull);
        assert_eq!(tls.roots, Roots::File(PathBuf::from("/etc/ca.pem")));
        let (url, tls) = split_url("postgres://u@db/remit").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(url, "postgres://u@db/remit");
        assert_eq!(tls.mode(), SslMode::Prefer, "libpq's default");
    }

    #[test]
    fn modes_follow_libpq() {
        let mode = |url: &str| split_url(url).map(|(_, tls)| tls.mode());
        assert_eq!(
            mode("postgres://h/d?sslrootcert=system").ok(),
            Some(SslMode::VerifyFull)
        );
        assert!(matches!(
            mode("postgres://h/d?sslrootcert=system&sslmode=require"),
            Err(TlsSettingsError::WeakModeForSystemRoots(SslMode::Require))
        ));
        let err = mode("postgres://h/d?sslmode=verify").unwrap_err();
        assert!(err.to_string().contains("verify-full"), "{err}");
    }

    #[test]
    fn a_verifying_mode_without_a_ca_file_says_which_file_it_looked_for() {
        let (_, tls) =
            split_url("postgres://h/d?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem")
                .unwrap_or_else(|e| panic!("{e}"));
        let err = tls.client_config().unwrap_err().to_string();
        assert!(
            err.contains("/nonexistent/ca.pem") && err.contains("verify-ca"),
            "{err}"
        );
        // `require` checks a CA only if the file exists, as libpq does.
        let (_, tls) = split_url("postgres://h/d?sslmode=require&sslrootcert=/nonexistent/ca.pem")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(tls.client_config().is_ok());
    }

    #[test]
    fn a_named_client_certificate_must_exist() {
        let (_, tls) = split_url("postgres://h/d?sslcert=/nonexistent/client.crt&sslkey=/x.key")
            .unwrap_or_else(|e| panic!("{e}"));
        let err = tls.client_config().unwrap_err().to_string();
        assert!(
            err.contains("sslcert") && err.contains("/nonexistent/client.crt"),
            "{err}"
        );
    }
}
