//! The DSN: where it comes from (`--dsn`, `DATABASE_URL`, the libpq environment or the
//! embedded cluster), how it is resolved as libpq would, and the only forms it is ever shown
//! or handed on in.
//!
//! The password is never shown: the only printable form of a DSN is [`Dsn::redacted`], every
//! message that could quote the password goes through [`Dsn::scrub`], and the forms that carry
//! it ([`Dsn::conninfo`], [`Dsn::url`]) are for a child process's environment only.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::Config;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::session::NEWER_TIMEOUTS;
use super::{config, conninfo, tls, PgError, APPLICATION_NAME, CONNECT_TIMEOUT};
use crate::redact;

/// Where the DSN came from (reported in provenance and in errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DsnSource {
    /// The `--dsn` option.
    Flag,
    /// The `DATABASE_URL` environment variable.
    DatabaseUrl,
    /// The libpq environment (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGSERVICE`, ...).
    LibpqEnv,
    /// A throwaway cluster the runner started itself.
    Embedded,
}

impl DsnSource {
    /// A short name for messages.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Flag => "--dsn",
            Self::DatabaseUrl => "DATABASE_URL",
            Self::LibpqEnv => "PG* environment",
            Self::Embedded => "embedded cluster",
        }
    }
}

/// A resolved DSN: the parsed config plus a printable, password-free form.
#[derive(Clone)]
pub struct Dsn {
    pub(super) config: Config,
    source: DsnSource,
    pub(super) tls: tls::Settings,
    /// Built on first use and shared by clones (loading the platform roots is slow).
    connector: Arc<OnceLock<Result<MakeRustlsConnect, String>>>,
    pub(super) connect_timeout: Duration,
    password: Option<String>,
    pub(super) notes: Vec<String>,
    /// The user's `options` (the runner's session settings are appended at connect time).
    pub(super) user_options: Option<String>,
    /// Which of [`NEWER_TIMEOUTS`] the server knows (shrinks on "unrecognized parameter").
    pub(super) newer_timeouts: Arc<Mutex<Vec<&'static str>>>,
}

impl fmt::Debug for Dsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Debug must not leak the password either (panics print Debug).
        f.debug_struct("Dsn")
            .field("dsn", &self.redacted())
            .field("source", &self.source)
            .finish()
    }
}

impl fmt::Display for Dsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

fn env_nonempty(env: &BTreeMap<String, String>, key: &str) -> Option<String> {
    env.get(key).filter(|v| !v.is_empty()).cloned()
}

/// The password written in a DSN string, found without a full parser, used only to scrub
/// messages produced before (or instead of) a successful parse.
fn password_in_text(dsn: &str) -> Option<String> {
    if let Some(rest) = dsn
        .trim_start()
        .strip_prefix("postgres://")
        .or_else(|| dsn.trim_start().strip_prefix("postgresql://"))
    {
        let authority = rest.split(['/', '?']).next().unwrap_or("");
        let userinfo = authority.rsplit_once('@')?.0;
        let pass = userinfo.split_once(':')?.1;
        return (!pass.is_empty()).then(|| pass.to_owned());
    }
    let idx = dsn.find("password")?;
    let after = dsn.get(idx + "password".len()..)?.trim_start();
    let after = after.strip_prefix('=')?.trim_start();
    let pass = if let Some(quoted) = after.strip_prefix('\'') {
        quoted.split('\'').next().unwrap_or("")
    } else {
        after.split_whitespace().next().unwrap_or("")
    };
    (!pass.is_empty()).then(|| pass.to_owned())
}

impl Dsn {
    /// Resolve the DSN: `--dsn` > `DATABASE_URL` > libpq environment. `Ok(None)` when none
    /// is given (the caller may then start an embedded cluster).
    ///
    /// # Errors
    /// [`PgError::InvalidDsn`] when the chosen DSN does not parse.
    pub fn resolve(flag: Option<&str>) -> Result<Option<Self>, PgError> {
        let env: BTreeMap<String, String> = std::env::vars()
            .filter(|(k, _)| {
                k.starts_with("PG") || ["DATABASE_URL", "HOME", "USER"].contains(&k.as_str())
            })
            .collect();
        Self::resolve_from(flag, &env)
    }

    /// [`Dsn::resolve`] with an explicit environment (testable without touching the process env).
    ///
    /// # Errors
    /// [`PgError::InvalidDsn`] when the chosen DSN does not parse.
    pub fn resolve_from(
        flag: Option<&str>,
        env: &BTreeMap<String, String>,
    ) -> Result<Option<Self>, PgError> {
        if let Some(text) = flag.filter(|t| !t.trim().is_empty()) {
            return Self::parse(text, DsnSource::Flag, env).map(Some);
        }
        if let Some(text) = env_nonempty(env, "DATABASE_URL") {
            return Self::parse(&text, DsnSource::DatabaseUrl, env).map(Some);
        }
        let libpq = [
            "PGHOST",
            "PGPORT",
            "PGUSER",
            "PGDATABASE",
            "PGHOSTADDR",
            "PGSERVICE",
        ];
        if libpq.iter().any(|k| env_nonempty(env, k).is_some()) {
            return Self::parse("", DsnSource::LibpqEnv, env).map(Some);
        }
        Ok(None)
    }

    /// Parse a DSN string, filling unset settings from the service file, the libpq
    /// environment and the password file, as libpq does.
    ///
    /// # Errors
    /// [`PgError::InvalidDsn`] naming the key, value, variable or file at fault.
    pub fn parse(
        text: &str,
        source: DsnSource,
        env: &BTreeMap<String, String>,
    ) -> Result<Self, PgError> {
        let text_password = password_in_text(text);
        // Known before anything can fail, so that no message about this DSN shows them.
        redact::remember_in(text);
        if let Some(pw) = env_nonempty(env, "PGPASSWORD") {
            redact::remember(&pw);
        }
        let invalid = |reason: String| PgError::InvalidDsn {
            source_name: source.as_str(),
            reason: redact::redact_secrets(&reason),
        };
        let mut s = conninfo::resolve(text, env).map_err(&invalid)?;
        let user = s
            .get("user")
            .map(str::to_owned)
            .or_else(|| env_nonempty(env, "USER"))
            .unwrap_or_else(|| "postgres".to_owned());
        conninfo::apply_passfile(&mut s, env, &user);
        let (config, connect_timeout) = config::client_config(&s, &user).map_err(&invalid)?;
        let tls = config::tls_settings(&s, env).map_err(&invalid)?;
        let password = s.get("password").map(str::to_owned).or(text_password);
        // Also the password read from a service or password file: masked from now on.
        if let Some(pw) = &password {
            redact::remember(pw);
        }
        Ok(Self {
            config,
            source,
            tls,
            connector: Arc::new(OnceLock::new()),
            connect_timeout,
            password,
            notes: s.notes.clone(),
            user_options: s.get("options").map(str::to_owned),
            newer_timeouts: Arc::new(Mutex::new(NEWER_TIMEOUTS.to_vec())),
        })
    }

    /// A DSN for a unix-socket cluster (the embedded one).
    #[must_use]
    pub fn unix_socket(dir: &std::path::Path, port: u16, user: &str, dbname: &str) -> Self {
        let mut config = Config::new();
        config
            .host_path(dir)
            .port(port)
            .user(user)
            .dbname(dbname)
            .ssl_mode(SslMode::Disable)
            .application_name(APPLICATION_NAME)
            .connect_timeout(CONNECT_TIMEOUT);
        Self {
            config,
            source: DsnSource::Embedded,
            tls: tls::Settings {
                mode: tls::Mode::Disable,
                check: tls::Check::None,
                roots: tls::Roots::System,
                client: None,
                sni: true,
            },
            connector: Arc::new(OnceLock::new()),
            connect_timeout: CONNECT_TIMEOUT,
            password: None,
            notes: Vec::new(),
            user_options: None,
            newer_timeouts: Arc::new(Mutex::new(NEWER_TIMEOUTS.to_vec())),
        }
    }

    /// The same server and credentials as another login role (least-privilege suite).
    #[must_use]
    pub fn with_user(&self, user: &str, password: &str) -> Self {
        let mut d = self.clone();
        d.config.user(user).password(password);
        // Masked from now on, as the run's own password already is.
        redact::remember(password);
        d.password = Some(password.to_owned());
        // The run's client certificate names the run's user, not this one.
        if d.tls.client.is_some() {
            d.tls.client = None;
            d.connector = Arc::new(OnceLock::new());
        }
        d
    }

    /// The same DSN with `extra` (`-c name=value ...`, libpq's `options` syntax) after the
    /// user's own `options`, so its settings win; [`Dsn::url`] carries them to a client that
    /// opens the URL. The kit's own sessions are unaffected: they pin theirs after both.
    #[must_use]
    pub fn with_options(&self, extra: &str) -> Self {
        let mut d = self.clone();
        d.user_options = Some(match self.user_options.as_deref().map(str::trim) {
            Some(user) if !user.is_empty() => format!("{user} {extra}"),
            _ => extra.to_owned(),
        });
        d
    }

    /// Where the DSN came from.
    #[must_use]
    pub fn source(&self) -> DsnSource {
        self.source
    }

    /// The role the DSN logs in as.
    #[must_use]
    pub fn user(&self) -> &str {
        self.config.get_user().unwrap_or("")
    }

    /// The effective `sslmode`.
    #[must_use]
    pub fn ssl_mode(&self) -> tls::Mode {
        self.tls.mode
    }

    /// A printable form: `postgres://user@host:port/db?sslmode=...`, never the password.
    #[must_use]
    pub fn redacted(&self) -> String {
        let c = &self.config;
        let mut hosts = host_names(c);
        if hosts.is_empty() {
            hosts = c.get_hostaddrs().iter().map(ToString::to_string).collect();
        }
        let port = c
            .get_ports()
            .first()
            .map_or_else(|| "5432".to_owned(), u16::to_string);
        let pass = if self.password.is_some() { ":***" } else { "" };
        format!(
            "postgres://{}{pass}@{}:{port}/{}?sslmode={}",
            c.get_user().unwrap_or(""),
            hosts.join(","),
            c.get_dbname().unwrap_or(c.get_user().unwrap_or("")),
            self.tls.mode.as_str(),
        )
    }

    /// A libpq key=value connection string with the password (for a child process's
    /// environment only, e.g. a producer's `AWA_CONFORMANCE_DSN`; never print it): host(s),
    /// port, user, dbname, password and sslmode.
    #[must_use]
    pub fn conninfo(&self) -> String {
        // libpq quoting: single quotes, backslash before `'` and `\`.
        let q = |v: &str| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"));
        let c = &self.config;
        let hosts = host_names(c);
        let mut parts = Vec::new();
        if !hosts.is_empty() {
            parts.push(format!("host={}", q(&hosts.join(","))));
        }
        if let Some(port) = c.get_ports().first() {
            parts.push(format!("port={port}"));
        }
        if let Some(user) = c.get_user() {
            parts.push(format!("user={}", q(user)));
        }
        if let Some(db) = c.get_dbname() {
            parts.push(format!("dbname={}", q(db)));
        }
        if let Some(pw) = &self.password {
            parts.push(format!("password={}", q(pw)));
        }
        parts.push(format!("sslmode={}", self.tls.mode.as_str()));
        parts.join(" ")
    }

    /// The same login as a `postgres://` URL with the password (for a child process's
    /// environment only: a producer's `AWA_CONFORMANCE_DSN_URL`; never print it), for drivers
    /// that open URLs only (asyncpg, node-postgres's `connectionString`): user, password,
    /// the first host (a Unix socket directory as the `host` parameter), port, dbname,
    /// sslmode and the user's `options`, every part percent-encoded.
    #[must_use]
    pub fn url(&self) -> String {
        use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
        // RFC 3986's unreserved characters stay as they are; everything else is encoded.
        const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
            .remove(b'-')
            .remove(b'.')
            .remove(b'_')
            .remove(b'~');
        let enc = |v: &str| utf8_percent_encode(v, COMPONENT).to_string();
        let c = &self.config;
        let mut query = vec![format!("sslmode={}", self.tls.mode.as_str())];
        let port = c.get_ports().first().copied();
        let (host, port) = match c.get_hosts().first() {
            // An IPv6 address goes in brackets, as a URL host must.
            Some(Host::Tcp(h)) if h.contains(':') => (
                format!("[{h}]"),
                port.map_or_else(String::new, |p| format!(":{p}")),
            ),
            Some(Host::Tcp(h)) => (enc(h), port.map_or_else(String::new, |p| format!(":{p}"))),
            // libpq's documented form for a socket directory: host and port as parameters.
            Some(Host::Unix(dir)) => {
                query.push(format!("host={}", enc(&dir.display().to_string())));
                if let Some(p) = port {
                    query.push(format!("port={p}"));
                }
                (String::new(), String::new())
            }
            None => (String::new(), String::new()),
        };
        let user = c.get_user().map(enc).unwrap_or_default();
        let password = self
            .password
            .as_deref()
            .map_or_else(String::new, |pw| format!(":{}", enc(pw)));
        let at = if user.is_empty() && password.is_empty() {
            ""
        } else {
            "@"
        };
        if let Some(options) = &self.user_options {
            query.push(format!("options={}", enc(options)));
        }
        format!(
            "postgresql://{user}{password}{at}{host}{port}/{}?{}",
            c.get_dbname().map(enc).unwrap_or_default(),
            query.join("&")
        )
    }

    /// Remove the password from any text (server or library messages): the one masking door
    /// ([`redact::redact_secrets`]), which knows this DSN's password since it was built.
    #[must_use]
    pub fn scrub(&self, text: &str) -> String {
        redact::redact_secrets(text)
    }

    /// The TLS connector (built once per DSN and its clones).
    pub(super) fn connector(&self) -> Result<MakeRustlsConnect, PgError> {
        self.connector
            .get_or_init(|| tls::connector(&self.tls))
            .clone()
            .map_err(|e| PgError::Tls(self.scrub(&e)))
    }
}

/// The configured hosts as libpq writes them: names, and socket directories as paths.
fn host_names(c: &tokio_postgres::Config) -> Vec<String> {
    c.get_hosts()
        .iter()
        .map(|h| match h {
            Host::Tcp(s) => s.clone(),
            Host::Unix(p) => p.display().to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::pg::test_env as env;

    #[test]
    fn the_url_form_opens_the_same_login() {
        let none = env(&[]);
        for written in [
            "host=db.example port=5433 user='me@corp' password='p@ss/w:rd é' dbname='my db' \
             sslmode=disable options='-c geqo=off'",
            "postgresql://u:secret@127.0.0.1:55432/awa_test?sslmode=disable",
            "host=/var/run/postgresql port=5999 user=postgres dbname=x sslmode=disable",
            "host=::1 port=5432 user=postgres dbname=x sslmode=disable",
        ] {
            let d = Dsn::parse(written, DsnSource::Flag, &none).unwrap();
            let url = d.url();
            assert!(url.starts_with("postgresql://"), "{url}");
            let again =
                Dsn::parse(&url, DsnSource::Flag, &none).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(again.conninfo(), d.conninfo(), "{written} -> {url}");
            assert_eq!(again.user_options, d.user_options, "{url}");
        }
    }

    #[test]
    fn extra_options_come_after_the_users_and_survive_the_url() {
        let none = env(&[]);
        let extra = "-c TimeZone=Asia/Kathmandu -c DateStyle=SQL,\\ DMY";
        for (written, want) in [
            (
                "host=h user=u dbname=d options='-c geqo=off'",
                format!("-c geqo=off {extra}"),
            ),
            ("postgresql://u@h/d", extra.to_owned()),
        ] {
            let d = Dsn::parse(written, DsnSource::Flag, &none).unwrap();
            let url = d.with_options(extra).url();
            let again =
                Dsn::parse(&url, DsnSource::Flag, &none).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(again.user_options.as_deref(), Some(want.as_str()), "{url}");
            assert_eq!(again.conninfo(), d.conninfo(), "{url}");
        }
    }

    #[test]
    fn precedence_flag_then_database_url_then_libpq() {
        let e = env(&[("DATABASE_URL", "postgres://u1@h1:1/d1"), ("PGHOST", "h2")]);
        let d = Dsn::resolve_from(Some("postgres://u0@h0:5/d0"), &e)
            .unwrap()
            .unwrap();
        assert_eq!(d.source(), DsnSource::Flag);
        assert!(d.redacted().contains("u0@h0:5/d0"), "{}", d.redacted());
        let d = Dsn::resolve_from(None, &e).unwrap().unwrap();
        assert_eq!(d.source(), DsnSource::DatabaseUrl);
        assert!(d.redacted().contains("u1@h1:1/d1"));
        let e = env(&[("PGHOST", "h2"), ("PGPORT", "7"), ("PGUSER", "u2")]);
        let d = Dsn::resolve_from(None, &e).unwrap().unwrap();
        assert_eq!(d.source(), DsnSource::LibpqEnv);
        assert!(d.redacted().contains("u2@h2:7"), "{}", d.redacted());
        assert!(Dsn::resolve_from(None, &env(&[("PGPASSWORD", "x")]))
            .unwrap()
            .is_none());
    }

    #[test]
    fn password_never_in_redacted_or_debug() {
        for text in [
            "postgres://bob:s3cr3t-pw@db:5432/app",
            "host=db user=bob password=s3cr3t-pw dbname=app",
        ] {
            let d = Dsn::parse(text, DsnSource::Flag, &BTreeMap::new()).unwrap();
            assert!(!d.redacted().contains("s3cr3t-pw"));
            assert!(!format!("{d:?}").contains("s3cr3t-pw"));
            assert!(d.redacted().contains(":***@"));
            assert_eq!(d.scrub("auth failed s3cr3t-pw"), "auth failed ***");
        }
        let d = Dsn::parse(
            "postgres://bob@db/app",
            DsnSource::Flag,
            &env(&[("PGPASSWORD", "envpw")]),
        )
        .unwrap();
        assert_eq!(d.scrub("x envpw"), "x ***");
    }

    #[test]
    fn invalid_dsn_error_is_scrubbed() {
        let err = Dsn::parse(
            "postgres://bob:s3cr3t-pw@db:notaport/app",
            DsnSource::Flag,
            &BTreeMap::new(),
        )
        .unwrap_err();
        assert!(!err.to_string().contains("s3cr3t-pw"), "{err}");
    }
}
