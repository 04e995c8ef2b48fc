//! From libpq's settings, as [`conninfo`] merged them, to what a connection is opened with:
//! the driver's [`Config`] and the [`tls::Settings`], every bad value named with where it came
//! from (the DSN, a service or password file, or a variable).
//!
//! The kit reads libpq's formats itself (tokio-postgres knows neither the service file nor
//! `sslrootcert`), so translating them into the driver's terms and into libpq's TLS rules is
//! the kit's job too; it lives here, apart from the parsing and from the [`Dsn`](super::Dsn)
//! that keeps the result.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use tokio_postgres::config::{
    ChannelBinding, LoadBalanceHosts, SslNegotiation, TargetSessionAttrs,
};
use tokio_postgres::Config;

use super::{conninfo, tls, APPLICATION_NAME, CONNECT_TIMEOUT};

/// The values a setting may take, for "X is not one of ..." errors.
fn one_of<T: Copy>(
    s: &conninfo::Settings,
    key: &str,
    choices: &[(&str, T)],
) -> Result<Option<T>, String> {
    let Some((value, origin)) = s.get_with_origin(key) else {
        return Ok(None);
    };
    choices
        .iter()
        .find(|(name, _)| *name == value)
        .map(|(_, v)| Some(*v))
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
            format!(
                "{key} {value:?} (from {origin}) is not one of {}",
                names.join(", ")
            )
        })
}

fn number<T: std::str::FromStr>(s: &conninfo::Settings, key: &str) -> Result<Option<T>, String> {
    let Some((value, origin)) = s.get_with_origin(key) else {
        return Ok(None);
    };
    value.trim().parse::<T>().map(Some).map_err(|_| {
        format!("{key} {value:?} (from {origin}) is not a valid number for this setting")
    })
}

/// Build the tokio-postgres config from merged settings; every bad value is named.
pub(super) fn client_config(
    s: &conninfo::Settings,
    user: &str,
) -> Result<(Config, Duration), String> {
    let mut c = Config::new();
    c.user(user);
    if let Some(hosts) = s.get("host") {
        for h in hosts.split(',') {
            if h.starts_with('/') {
                c.host_path(h);
            } else if !h.is_empty() {
                c.host(h);
            }
        }
    }
    if let Some((addrs, origin)) = s.get_with_origin("hostaddr") {
        for a in addrs.split(',') {
            let ip: IpAddr = a
                .trim()
                .parse()
                .map_err(|_| format!("hostaddr {a:?} (from {origin}) is not an IP address"))?;
            c.hostaddr(ip);
        }
    }
    if c.get_hosts().is_empty() && c.get_hostaddrs().is_empty() {
        c.host("localhost");
    }
    if let Some((ports, origin)) = s.get_with_origin("port") {
        for p in ports.split(',') {
            let port = p
                .trim()
                .parse::<u16>()
                .map_err(|_| format!("port {p:?} (from {origin}) is not a port number"))?;
            c.port(port);
        }
    }
    if let Some(db) = s.get("dbname") {
        c.dbname(db);
    }
    if let Some(pw) = s.get("password") {
        c.password(pw);
    }
    c.application_name(
        s.get("application_name")
            .or_else(|| s.get("fallback_application_name"))
            .unwrap_or(APPLICATION_NAME),
    );
    // libpq: at most the given seconds, at least 2; 0 (or negative) means "wait forever",
    // which a runner must not do, so it means the default here.
    let connect_timeout = match number::<i64>(s, "connect_timeout")? {
        Some(secs) if secs > 0 => Duration::from_secs(secs.max(2).unsigned_abs()),
        _ => CONNECT_TIMEOUT,
    };
    c.connect_timeout(connect_timeout);
    c.keepalives(one_of(s, "keepalives", &[("1", true), ("0", false)])?.unwrap_or(true));
    c.keepalives_idle(Duration::from_secs(
        number::<u64>(s, "keepalives_idle")?.unwrap_or(10),
    ));
    if let Some(secs) = number::<u64>(s, "keepalives_interval")? {
        c.keepalives_interval(Duration::from_secs(secs));
    }
    if let Some(n) = number::<u32>(s, "keepalives_count")? {
        c.keepalives_retries(n);
    }
    if let Some(ms) = number::<u64>(s, "tcp_user_timeout")? {
        c.tcp_user_timeout(Duration::from_millis(ms));
    }
    if let Some(v) = one_of(
        s,
        "channel_binding",
        &[
            ("disable", ChannelBinding::Disable),
            ("prefer", ChannelBinding::Prefer),
            ("require", ChannelBinding::Require),
        ],
    )? {
        c.channel_binding(v);
    }
    if let Some(v) = one_of(
        s,
        "sslnegotiation",
        &[
            ("postgres", SslNegotiation::Postgres),
            ("direct", SslNegotiation::Direct),
        ],
    )? {
        c.ssl_negotiation(v);
    }
    if let Some(v) = one_of(
        s,
        "target_session_attrs",
        &[
            ("any", TargetSessionAttrs::Any),
            ("read-write", TargetSessionAttrs::ReadWrite),
        ],
    )? {
        c.target_session_attrs(v);
    }
    if let Some(v) = one_of(
        s,
        "load_balance_hosts",
        &[
            ("disable", LoadBalanceHosts::Disable),
            ("random", LoadBalanceHosts::Random),
        ],
    )? {
        c.load_balance_hosts(v);
    }
    // The runner has no GSSAPI: "prefer" then means plain TLS/TCP, as libpq without GSS.
    one_of(s, "gssencmode", &[("disable", ()), ("prefer", ())])?;
    Ok((c, connect_timeout))
}

/// libpq's TLS rules: the mode, the root file (`sslrootcert`, else `~/.postgresql/root.crt`
/// when it exists; a root file makes `prefer`/`require` check the chain, as in libpq),
/// the client certificate (`sslcert`/`sslkey`, else `~/.postgresql/postgresql.{crt,key}`).
pub(super) fn tls_settings(
    s: &conninfo::Settings,
    env: &BTreeMap<String, String>,
) -> Result<tls::Settings, String> {
    let pg_dir = conninfo::home(env).map(|h| h.join(".postgresql"));
    let default_file = |name: &str| {
        pg_dir
            .as_ref()
            .map(|d| d.join(name))
            .filter(|p| p.is_file())
    };
    let rootcert = s.get("sslrootcert");
    let mode = match s.get_with_origin("sslmode") {
        Some((text, origin)) => tls::Mode::parse(text).ok_or_else(|| {
            format!(
                "sslmode {text:?} (from {origin}) is not one of disable, allow, prefer, \
                 require, verify-ca, verify-full"
            )
        })?,
        // libpq: sslrootcert=system implies verify-full.
        None if rootcert == Some("system") => tls::Mode::VerifyFull,
        None => tls::Mode::Prefer,
    };
    if rootcert == Some("system") && mode != tls::Mode::VerifyFull {
        return Err(format!(
            "sslmode {:?} may not be used with sslrootcert=system (use verify-full)",
            mode.as_str()
        ));
    }
    let root_file = match rootcert {
        Some("system") => None,
        Some(path) => Some(PathBuf::from(path)),
        None => default_file("root.crt"),
    };
    let check = match (mode, &root_file) {
        (tls::Mode::Disable, _) => tls::Check::None,
        (tls::Mode::VerifyFull, _) => tls::Check::Full,
        (tls::Mode::VerifyCa, _) | (_, Some(_)) => tls::Check::Chain,
        _ => tls::Check::None,
    };
    let roots = root_file.map_or(tls::Roots::System, tls::Roots::File);
    let cert = s
        .get("sslcert")
        .map(PathBuf::from)
        .or_else(|| default_file("postgresql.crt"));
    let client = match cert {
        None => None,
        Some(cert) => {
            let key = s
                .get("sslkey")
                .map(PathBuf::from)
                .or_else(|| pg_dir.as_ref().map(|d| d.join("postgresql.key")))
                .ok_or_else(|| {
                    format!(
                        "sslcert {} is set but no sslkey (and no home directory for the \
                         default key file)",
                        cert.display()
                    )
                })?;
            Some((cert, key))
        }
    };
    let sni = one_of(s, "sslsni", &[("1", true), ("0", false)])?.unwrap_or(true);
    Ok(tls::Settings {
        mode,
        check,
        roots,
        client,
        sni,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pg::{Dsn, DsnSource};

    use crate::pg::test_env as env;

    #[test]
    fn sslmodes() {
        let e = BTreeMap::new();
        let d = Dsn::parse("postgres://u@h/d?sslmode=verify-full", DsnSource::Flag, &e).unwrap();
        assert_eq!(d.tls.check, tls::Check::Full);
        assert_eq!(d.tls.roots, tls::Roots::System);
        let d = Dsn::parse("postgres://u@h/d?sslmode=verify-ca", DsnSource::Flag, &e).unwrap();
        assert_eq!(d.tls.check, tls::Check::Chain);
        assert!(
            d.redacted().ends_with("sslmode=verify-ca"),
            "{}",
            d.redacted()
        );
        let d = Dsn::parse(
            "postgres://u@h/d",
            DsnSource::Flag,
            &env(&[("PGSSLMODE", "require")]),
        )
        .unwrap();
        assert_eq!(
            (d.tls.mode, d.tls.check),
            (tls::Mode::Require, tls::Check::None)
        );
        // libpq: a root file makes require check the chain.
        let d = Dsn::parse(
            "host=h sslmode=require sslrootcert=/ca.pem",
            DsnSource::Flag,
            &e,
        )
        .unwrap();
        assert_eq!(d.tls.check, tls::Check::Chain);
        assert_eq!(d.tls.roots, tls::Roots::File("/ca.pem".into()));
        let d = Dsn::parse("host=h sslrootcert=system", DsnSource::Flag, &e).unwrap();
        assert_eq!(d.tls.mode, tls::Mode::VerifyFull);
        let err = Dsn::parse(
            "host=h sslmode=require sslrootcert=system",
            DsnSource::Flag,
            &e,
        )
        .unwrap_err();
        assert!(err.to_string().contains("verify-full"), "{err}");
        let err = Dsn::parse(
            "postgres://u@h/d",
            DsnSource::Flag,
            &env(&[("PGSSLMODE", "bogus")]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("PGSSLMODE"), "{err}");
        let d = Dsn::parse(
            "host=h sslcert=/c.pem sslkey=/k.pem",
            DsnSource::Flag,
            &env(&[("PGSSLMODE", "disable")]),
        )
        .unwrap();
        assert_eq!(d.tls.check, tls::Check::None);
        assert_eq!(
            d.tls.client,
            Some((PathBuf::from("/c.pem"), PathBuf::from("/k.pem")))
        );
    }

    #[test]
    fn bad_values_are_named() {
        let e = BTreeMap::new();
        for (text, word) in [
            ("postgres://u:pw-secret@h:notaport/d", "port \"notaport\""),
            (
                "host=h port=5432 connect_timeout=soon password=pw-secret",
                "connect_timeout",
            ),
            (
                "host=h target_session_attrs=standby",
                "target_session_attrs",
            ),
            ("host=h hostaddr=not-an-ip", "hostaddr"),
            ("host=h sslmode=verify", "sslmode \"verify\""),
            ("host=h sslrootcrt=/x", "\"sslrootcrt\""),
            ("postgres://h/d?sslmdoe=require", "\"sslmdoe\""),
        ] {
            let err = Dsn::parse(text, DsnSource::Flag, &e)
                .unwrap_err()
                .to_string();
            assert!(err.contains(word), "{text}: {err}");
            assert!(!err.contains("pw-secret"), "{err}");
        }
        let err = Dsn::parse(
            "",
            DsnSource::LibpqEnv,
            &env(&[("PGPORT", "x"), ("PGPASSWORD", "pw-secret")]),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("(from PGPORT)"), "{err}");
    }

    #[test]
    fn application_name_connect_timeout_and_pgoptions() {
        let d = Dsn::parse("host=h", DsnSource::Flag, &BTreeMap::new()).unwrap();
        assert_eq!(d.config.get_application_name(), Some(APPLICATION_NAME));
        let d = Dsn::parse("host=h", DsnSource::Flag, &env(&[("PGAPPNAME", "mine")])).unwrap();
        assert_eq!(d.config.get_application_name(), Some("mine"));
        let d = Dsn::parse(
            "host=h connect_timeout=1",
            DsnSource::Flag,
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(d.connect_timeout, Duration::from_secs(2));
        let d = Dsn::parse(
            "host=h connect_timeout=0",
            DsnSource::Flag,
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(d.connect_timeout, CONNECT_TIMEOUT);
        let d = Dsn::parse(
            "host=h",
            DsnSource::Flag,
            &env(&[("PGCONNECT_TIMEOUT", "5"), ("PGOPTIONS", "-c work_mem=1MB")]),
        )
        .unwrap();
        assert_eq!(d.connect_timeout, Duration::from_secs(5));
        assert_eq!(d.user_options.as_deref(), Some("-c work_mem=1MB"));
    }
}
