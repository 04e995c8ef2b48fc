//! TLS through rustls with libpq's `sslmode` semantics: `prefer`/`require` encrypt without
//! checking, `verify-ca` checks the chain but not the host name, `verify-full` checks both.
//!
//! Trust anchors are the `sslrootcert` file, or the platform's store (`sslrootcert=system`,
//! or no root file at all). Client certificates come from `sslcert`/`sslkey`. The crypto is
//! ring's; nothing links OpenSSL (docs/adr/0036-libpq-parity-and-rustls.md).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// No TLS.
    Disable,
    /// libpq tries plaintext first; tokio-postgres cannot, so this behaves as `prefer`.
    Allow,
    /// TLS when the server offers it, no certificate check.
    Prefer,
    /// TLS, no certificate check.
    Require,
    /// TLS, the chain must lead to a trusted root; the host name is not checked.
    VerifyCa,
    /// TLS, chain and host name checked.
    VerifyFull,
}

impl Mode {
    /// Parse libpq's spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "disable" => Self::Disable,
            "allow" => Self::Allow,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            _ => return None,
        })
    }

    /// libpq's spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Allow => "allow",
            Self::Prefer => "prefer",
            Self::Require => "require",
            Self::VerifyCa => "verify-ca",
            Self::VerifyFull => "verify-full",
        }
    }

    /// Whether the server's certificate chain is checked.
    #[must_use]
    pub fn verifies(self) -> bool {
        matches!(self, Self::VerifyCa | Self::VerifyFull)
    }
}

/// What is checked of the server's certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Check {
    /// Nothing (encryption only).
    None,
    /// The chain leads to a trusted root (`verify-ca`, or a root file with `prefer`/`require`).
    Chain,
    /// Chain and host name (`verify-full`).
    Full,
}

/// Where trust anchors come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Roots {
    /// The platform's store (`sslrootcert=system`, or no root file given or found).
    System,
    /// A PEM file of CA certificates.
    File(PathBuf),
}

/// Everything the TLS connector depends on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Settings {
    /// The requested mode.
    pub mode: Mode,
    /// What is checked (libpq: a root file makes `prefer`/`require` check the chain).
    pub check: Check,
    /// The trust anchors (used unless `check` is [`Check::None`]).
    pub roots: Roots,
    /// Client certificate and key (PEM files).
    pub client: Option<(PathBuf, PathBuf)>,
    /// Send SNI (`sslsni`, default 1).
    pub sni: bool,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The platform's roots, loaded once per process (reading the store is slow, and the race
/// suite opens many connections at once).
fn system_roots() -> Result<RootCertStore, String> {
    static ROOTS: OnceLock<Result<Vec<CertificateDer<'static>>, String>> = OnceLock::new();
    let certs = ROOTS
        .get_or_init(|| {
            let found = rustls_native_certs::load_native_certs();
            if found.certs.is_empty() {
                let errors: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
                return Err(format!(
                    "the platform's certificate store has no trusted roots ({}); pass \
                     sslrootcert=FILE with the CA that signed the server's certificate",
                    if errors.is_empty() {
                        "no error reported".to_owned()
                    } else {
                        errors.join("; ")
                    }
                ));
            }
            Ok(found.certs)
        })
        .clone()?;
    let mut store = RootCertStore::empty();
    // Platform stores often hold a few certificates webpki cannot parse; skip those.
    let _ = store.add_parsable_certificates(certs);
    Ok(store)
}

fn file_roots(path: &Path) -> Result<RootCertStore, String> {
    let certs = read_certs(path, "sslrootcert")?;
    let mut store = RootCertStore::empty();
    for cert in certs {
        store
            .add(cert)
            .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
    }
    Ok(store)
}

fn read_certs(path: &Path, key: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{key} {}: cannot read: {e}", path.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{key} {}: not a PEM certificate file: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "{key} {}: no PEM certificate in the file",
            path.display()
        ));
    }
    Ok(certs)
}

/// Build the connector for `s`.
///
/// # Errors
/// A message naming the setting (`sslrootcert`, `sslcert`, `sslkey`) and the file at fault.
pub fn connector(s: &Settings) -> Result<MakeRustlsConnect, String> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS protocol versions: {e}"))?;
    let verifier: Arc<dyn ServerCertVerifier> = if s.check != Check::None {
        let roots = match &s.roots {
            Roots::System => system_roots()?,
            Roots::File(path) => file_roots(path)?,
        };
        let webpki =
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
                .build()
                .map_err(|e| format!("certificate verifier: {e}"))?;
        if s.check == Check::Full {
            webpki
        } else {
            Arc::new(ChainOnly(webpki))
        }
    } else {
        Arc::new(NoCheck(provider))
    };
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match &s.client {
        Some((cert, key)) => {
            let chain = read_certs(cert, "sslcert")?;
            let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                format!(
                    "sslkey {}: cannot read an unencrypted PEM private key: {e}",
                    key.display()
                )
            })?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| format!("sslcert/sslkey {}: {e}", cert.display()))?
        }
        None => builder.with_no_client_auth(),
    };
    config.enable_sni = s.sni;
    Ok(MakeRustlsConnect::new(config))
}

/// `verify-ca`: the full webpki check, except that a certificate valid for another name passes
/// (webpki checks the chain before the name, so a name error means the chain was good).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `prefer`/`require`: encryption without authentication, as libpq does. The handshake
/// signatures are still checked, so the peer holds the key of the certificate it sent.
#[derive(Debug)]
struct NoCheck(Arc<CryptoProvider>);

impl ServerCertVerifier for NoCheck {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Whether an error chain carries a rustls certificate or handshake error.
#[must_use]
pub fn is_tls_error(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if err.downcast_ref::<rustls::Error>().is_some() {
            return true;
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some())
            {
                return true;
            }
        }
        cur = err.source();
    }
    false
}
