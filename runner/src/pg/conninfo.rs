//! libpq connection settings: conninfo strings and URIs, the service file, the `PG*`
//! environment and the password file, merged with libpq's precedence (DSN > service > env >
//! default), with every bad key or value named in the error.
//!
//! libpq's grammar is small but has no Rust implementation that covers the service and
//! password files; tokio-postgres parses neither `sslrootcert` nor `service`. This module is
//! the one place that reads these formats (docs/adr/0036-libpq-parity-and-rustls.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use percent_encoding::percent_decode_str;

/// Where a setting's value came from (named in errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The DSN text (`--dsn` or `DATABASE_URL`).
    Dsn,
    /// A section of a service file.
    Service(PathBuf),
    /// An environment variable.
    Env(&'static str),
    /// A password file.
    PassFile(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Dsn => f.write_str("the DSN"),
            Self::Service(p) => write!(f, "service file {}", p.display()),
            Self::Env(v) => f.write_str(v),
            Self::PassFile(p) => write!(f, "password file {}", p.display()),
        }
    }
}

/// Every libpq keyword this runner honours, with its environment variable.
pub const KEYWORDS: [(&str, Option<&str>); 27] = [
    ("service", Some("PGSERVICE")),
    ("host", Some("PGHOST")),
    ("hostaddr", Some("PGHOSTADDR")),
    ("port", Some("PGPORT")),
    ("dbname", Some("PGDATABASE")),
    ("user", Some("PGUSER")),
    ("password", Some("PGPASSWORD")),
    ("passfile", Some("PGPASSFILE")),
    ("channel_binding", Some("PGCHANNELBINDING")),
    ("connect_timeout", Some("PGCONNECT_TIMEOUT")),
    ("options", Some("PGOPTIONS")),
    ("application_name", Some("PGAPPNAME")),
    ("fallback_application_name", None),
    ("keepalives", None),
    ("keepalives_idle", None),
    ("keepalives_interval", None),
    ("keepalives_count", None),
    ("tcp_user_timeout", None),
    ("sslmode", Some("PGSSLMODE")),
    ("sslnegotiation", Some("PGSSLNEGOTIATION")),
    ("sslcert", Some("PGSSLCERT")),
    ("sslkey", Some("PGSSLKEY")),
    ("sslrootcert", Some("PGSSLROOTCERT")),
    ("sslsni", Some("PGSSLSNI")),
    ("gssencmode", Some("PGGSSENCMODE")),
    ("target_session_attrs", Some("PGTARGETSESSIONATTRS")),
    ("load_balance_hosts", Some("PGLOADBALANCEHOSTS")),
];

/// libpq keywords (and their variables) this runner cannot honour: silently ignoring them
/// could weaken what the user asked for (a CRL, a peer check), so they are errors.
const UNSUPPORTED: [(&str, Option<&str>); 13] = [
    ("sslpassword", None),
    ("sslcrl", Some("PGSSLCRL")),
    ("sslcrldir", Some("PGSSLCRLDIR")),
    ("sslcertmode", Some("PGSSLCERTMODE")),
    ("sslcompression", Some("PGSSLCOMPRESSION")),
    ("ssl_min_protocol_version", Some("PGSSLMINPROTOCOLVERSION")),
    ("ssl_max_protocol_version", Some("PGSSLMAXPROTOCOLVERSION")),
    ("requirepeer", Some("PGREQUIREPEER")),
    ("require_auth", Some("PGREQUIREAUTH")),
    ("krbsrvname", Some("PGKRBSRVNAME")),
    ("gsslib", Some("PGGSSLIB")),
    ("replication", None),
    ("client_encoding", Some("PGCLIENTENCODING")),
];

fn known(key: &str) -> Result<(), String> {
    if KEYWORDS.iter().any(|(k, _)| *k == key) {
        return Ok(());
    }
    if UNSUPPORTED.iter().any(|(k, _)| *k == key) {
        return Err(format!(
            "key {key:?} is a libpq setting this runner does not support; remove it"
        ));
    }
    let names: Vec<&str> = KEYWORDS.iter().map(|(k, _)| *k).collect();
    Err(format!(
        "unknown key {key:?}; the known keys are {}",
        names.join(", ")
    ))
}

/// The merged settings: keyword → (value, origin).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    values: BTreeMap<&'static str, (String, Origin)>,
    /// Things the user should know when the connection fails (e.g. an ignored password file).
    pub notes: Vec<String>,
}

impl Settings {
    /// The value of `key`, if set.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(|(v, _)| v.as_str())
    }

    /// The value of `key` and where it came from.
    #[must_use]
    pub fn get_with_origin(&self, key: &str) -> Option<(&str, &Origin)> {
        self.values.get(key).map(|(v, o)| (v.as_str(), o))
    }

    fn static_key(key: &str) -> Option<&'static str> {
        KEYWORDS.iter().map(|(k, _)| *k).find(|k| *k == key)
    }

    fn set(&mut self, key: &str, value: String, origin: Origin) -> Result<(), String> {
        known(key)?;
        if let Some(k) = Self::static_key(key) {
            self.values.insert(k, (value, origin));
        }
        Ok(())
    }

    fn set_default(&mut self, key: &'static str, value: String, origin: Origin) {
        self.values.entry(key).or_insert((value, origin));
    }
}

/// Parse a DSN (URI or key=value) into pairs, in order.
///
/// # Errors
/// A message naming the bad key, value or position.
pub fn parse_text(text: &str) -> Result<Vec<(String, String)>, String> {
    let trimmed = text.trim_start();
    for scheme in ["postgresql://", "postgres://"] {
        if let Some(rest) = trimmed.strip_prefix(scheme) {
            return parse_uri(rest);
        }
    }
    parse_keyvalue(text)
}

fn decode(part: &str, what: &str) -> Result<String, String> {
    percent_decode_str(part)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| format!("{what} is not valid percent-encoded UTF-8"))
}

/// `[user[:password]@][host[:port][,...]][/dbname][?key=value&...]` (after the scheme).
fn parse_uri(rest: &str) -> Result<Vec<(String, String)>, String> {
    let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, dbname) = main.split_once('/').unwrap_or((main, ""));
    let mut out = Vec::new();
    let hostlist = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => {
            let (user, password) = match userinfo.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (userinfo, None),
            };
            if !user.is_empty() {
                out.push(("user".to_owned(), decode(user, "the URI's user")?));
            }
            if let Some(p) = password {
                out.push(("password".to_owned(), decode(p, "the URI's password")?));
            }
            hosts
        }
        None => authority,
    };
    if !hostlist.is_empty() {
        let (mut hosts, mut ports) = (Vec::new(), Vec::new());
        for spec in hostlist.split(',') {
            let (host, port) = if let Some(v6) = spec.strip_prefix('[') {
                let (addr, after) = v6
                    .split_once(']')
                    .ok_or_else(|| format!("host {spec:?}: missing \"]\" after an IPv6 address"))?;
                let port = match after {
                    "" => "",
                    p => p
                        .strip_prefix(':')
                        .ok_or_else(|| format!("host {spec:?}: unexpected text after \"]\""))?,
                };
                (addr.to_owned(), port)
            } else {
                let (h, p) = spec.split_once(':').unwrap_or((spec, ""));
                (decode(h, "a URI host")?, p)
            };
            hosts.push(host);
            ports.push(port.to_owned());
        }
        out.push(("host".to_owned(), hosts.join(",")));
        if ports.iter().any(|p| !p.is_empty()) {
            let ports: Vec<String> = ports
                .into_iter()
                .map(|p| if p.is_empty() { "5432".to_owned() } else { p })
                .collect();
            out.push(("port".to_owned(), ports.join(",")));
        }
    }
    if !dbname.is_empty() {
        out.push(("dbname".to_owned(), decode(dbname, "the URI's database")?));
    }
    for param in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = param
            .split_once('=')
            .ok_or_else(|| format!("URI parameter {param:?} has no \"=\""))?;
        let (k, v) = (
            decode(k, "a URI parameter name")?,
            decode(v, "a URI parameter")?,
        );
        // JDBC's ssl=true, which libpq also accepts, means sslmode=require.
        if k == "ssl" && v == "true" {
            out.push(("sslmode".to_owned(), "require".to_owned()));
            continue;
        }
        known(&k)?;
        out.push((k, v));
    }
    Ok(out)
}

/// `key = value ...` with libpq's quoting: `'...'` with `\'` and `\\`, or a bare word.
fn parse_keyvalue(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(format!(
                "missing \"=\" after {key:?} (use key=value pairs or a postgres:// URL)"
            ));
        }
        known(&key)?;
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => return Err(format!("unterminated quoted value of {key:?}")),
                    Some('\'') => break,
                    Some('\\') => value.extend(chars.next()),
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        out.push((key, value));
    }
}

/// The user's home directory (for `~/.pgpass`, `~/.pg_service.conf`, `~/.postgresql/`).
#[must_use]
pub fn home(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    env.get("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

fn nonempty<'a>(env: &'a BTreeMap<String, String>, key: &str) -> Option<&'a str> {
    env.get(key).map(String::as_str).filter(|v| !v.is_empty())
}

/// The service files to search, in order: the user's, then the system's.
fn service_files(env: &BTreeMap<String, String>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(f) = nonempty(env, "PGSERVICEFILE") {
        files.push(PathBuf::from(f));
    } else if let Some(h) = home(env) {
        files.push(h.join(".pg_service.conf"));
    }
    // Debian's libpq is built with this sysconfdir; PGSYSCONFDIR overrides it as in libpq.
    let sysconf = nonempty(env, "PGSYSCONFDIR").unwrap_or("/etc/postgresql-common");
    files.push(Path::new(sysconf).join("pg_service.conf"));
    files
}

/// The pairs of section `[name]` in a service file (`None`: the file has no such section).
///
/// # Errors
/// A message naming the file, line and problem.
pub fn service_section(
    path: &Path,
    text: &str,
    name: &str,
) -> Result<Option<Vec<(String, String)>>, String> {
    let mut found: Option<Vec<(String, String)>> = None;
    let mut in_section = false;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let at = || format!("service file {}, line {}", path.display(), n + 1);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            let section = section
                .strip_suffix(']')
                .ok_or_else(|| format!("{}: missing \"]\"", at()))?;
            if found.is_some() && in_section {
                // The first section of that name wins, as in libpq.
                return Ok(found);
            }
            in_section = section == name;
            if in_section {
                found = Some(Vec::new());
            }
            continue;
        }
        if !in_section {
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| format!("{}: syntax error (expected key=value)", at()))?;
        let k = k.trim();
        if k == "service" {
            return Err(format!(
                "{}: nested service specifications are not supported",
                at()
            ));
        }
        known(k).map_err(|e| format!("{}: {e}", at()))?;
        if let Some(pairs) = found.as_mut() {
            pairs.push((k.to_owned(), v.trim().to_owned()));
        }
    }
    Ok(found)
}

/// Resolve a DSN text plus the environment into merged settings (no password file yet).
///
/// # Errors
/// A message naming the key, value, file or variable at fault.
pub fn resolve(text: &str, env: &BTreeMap<String, String>) -> Result<Settings, String> {
    let mut s = Settings::default();
    for (k, v) in parse_text(text)? {
        s.set(&k, v, Origin::Dsn)?;
    }
    for (key, var) in UNSUPPORTED {
        if let Some(var) = var.filter(|v| nonempty(env, v).is_some()) {
            return Err(format!(
                "{var} is set, but {key:?} is a libpq setting this runner does not support; \
                 unset it"
            ));
        }
    }
    let service = match s.get_with_origin("service") {
        Some((name, _)) => Some(name.to_owned()),
        None => nonempty(env, "PGSERVICE").map(str::to_owned),
    };
    if let Some(name) = service {
        let files = service_files(env);
        let mut section = None;
        for file in &files {
            let Ok(text) = std::fs::read_to_string(file) else {
                continue;
            };
            if let Some(pairs) = service_section(file, &text, &name)? {
                section = Some((file.clone(), pairs));
                break;
            }
        }
        let Some((file, pairs)) = section else {
            let searched: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            return Err(format!(
                "service {name:?} is not defined in {} (set PGSERVICEFILE or PGSYSCONFDIR to \
                 the file that defines it)",
                searched.join(" or ")
            ));
        };
        for (k, v) in pairs {
            if let Some(key) = Settings::static_key(&k) {
                s.set_default(key, v, Origin::Service(file.clone()));
            }
        }
    }
    for (key, var) in KEYWORDS {
        if let Some(var) = var {
            if let Some(v) = nonempty(env, var) {
                s.set_default(key, v.to_owned(), Origin::Env(var));
            }
        }
    }
    Ok(s)
}

/// The host name a password-file line is matched against for `host` (libpq: a socket in the
/// default directory counts as `localhost`).
fn pgpass_host(host: Option<&str>) -> String {
    match host {
        None | Some("") => "localhost".to_owned(),
        Some(h) if ["/var/run/postgresql", "/run/postgresql", "/tmp"].contains(&h) => {
            "localhost".to_owned()
        }
        Some(h) => h.to_owned(),
    }
}

/// Split one password-file line at unescaped `:` (with `\:` and `\\` unescaped).
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(last)) = (chars.next(), fields.last_mut()) {
                    last.push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => {
                if let Some(last) = fields.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    fields
}

/// The password for (host, port, dbname, user) from the text of a password file.
#[must_use]
pub fn pgpass_lookup(
    text: &str,
    host: Option<&str>,
    port: &str,
    dbname: &str,
    user: &str,
) -> Option<String> {
    let host = pgpass_host(host);
    let want = [host.as_str(), port, dbname, user];
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .map(pgpass_fields)
        .find(|f| {
            f.len() == 5
                && f.iter()
                    .zip(want)
                    .all(|(field, want)| field == "*" || field == want)
        })
        .and_then(|mut f| f.pop())
}

/// Fill `password` from the password file (`passfile`, `PGPASSFILE` or `~/.pgpass`) when no
/// password is set. As libpq does, a file readable by group or others is ignored (with a note).
pub fn apply_passfile(s: &mut Settings, env: &BTreeMap<String, String>, user: &str) {
    if s.get("password").is_some() {
        return;
    }
    let path = match s.get("passfile") {
        Some(p) => PathBuf::from(p),
        None => match home(env) {
            Some(h) => h.join(".pgpass"),
            None => return,
        },
    };
    let Ok(meta) = std::fs::metadata(&path) else {
        return;
    };
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode();
    if mode & 0o077 != 0 {
        s.notes.push(format!(
            "password file {} was ignored: its permissions {:o} let group or others read it \
             (chmod 0600 it)",
            path.display(),
            mode & 0o777
        ));
        return;
    }
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    let host = s
        .get("host")
        .and_then(|h| h.split(',').next())
        .filter(|h| !h.is_empty())
        .or_else(|| s.get("hostaddr").and_then(|h| h.split(',').next()));
    let port = s
        .get("port")
        .and_then(|p| p.split(',').next())
        .unwrap_or("5432")
        .to_owned();
    let dbname = s.get("dbname").unwrap_or(user).to_owned();
    if let Some(pw) = pgpass_lookup(&text, host, &port, &dbname, user) {
        s.set_default("password", pw, Origin::PassFile(path));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::pg::test_env as env;

    #[test]
    fn keyvalue_quoting_and_errors() {
        let p = parse_text(r"host=h  port = 5 password='a b\'c\\' dbname=x\ y").unwrap();
        assert_eq!(
            p,
            vec![
                ("host".into(), "h".into()),
                ("port".into(), "5".into()),
                ("password".into(), r"a b'c\".into()),
                ("dbname".into(), "x y".into()),
            ]
        );
        let e = parse_text("host=h sslrootcrt=/x").unwrap_err();
        assert!(e.contains("\"sslrootcrt\""), "{e}");
        assert!(parse_text("host").unwrap_err().contains("missing \"=\""));
        assert!(parse_text("password='abc")
            .unwrap_err()
            .contains("unterminated"));
        assert!(parse_text("sslcrl=/x")
            .unwrap_err()
            .contains("does not support"));
    }

    #[test]
    fn uri_forms() {
        let p = parse_text(
            "postgresql://us%40er:p%3Aw@[::1]:5433,h2/my%20db?sslmode=verify-ca&sslrootcert=/ca.pem",
        )
        .unwrap();
        assert_eq!(
            p,
            vec![
                ("user".into(), "us@er".into()),
                ("password".into(), "p:w".into()),
                ("host".into(), "::1,h2".into()),
                ("port".into(), "5433,5432".into()),
                ("dbname".into(), "my db".into()),
                ("sslmode".into(), "verify-ca".into()),
                ("sslrootcert".into(), "/ca.pem".into()),
            ]
        );
        let e = parse_text("postgres://u@h/d?sslmdoe=require").unwrap_err();
        assert!(e.contains("\"sslmdoe\""), "{e}");
        assert_eq!(
            parse_text("postgres://h?ssl=true").unwrap(),
            vec![
                ("host".into(), "h".into()),
                ("sslmode".into(), "require".into())
            ]
        );
        assert_eq!(
            parse_text("postgres:///d?host=%2Ftmp").unwrap(),
            vec![
                ("dbname".into(), "d".into()),
                ("host".into(), "/tmp".into())
            ]
        );
    }

    #[test]
    fn precedence_dsn_then_service_then_env() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("svc.conf");
        std::fs::write(
            &file,
            "# comment\n[other]\nhost=wrong\n[mine]\nhost = svc-host\nport=6000\ndbname=svcdb\n",
        )
        .unwrap();
        let e = env(&[
            ("PGSERVICEFILE", file.to_str().unwrap()),
            ("PGSERVICE", "mine"),
            ("PGPORT", "7000"),
            ("PGUSER", "envuser"),
            ("PGAPPNAME", "myapp"),
        ]);
        let s = resolve("dbname=dsndb", &e).unwrap();
        assert_eq!(s.get("dbname"), Some("dsndb"));
        assert_eq!(s.get("host"), Some("svc-host"));
        assert_eq!(s.get("port"), Some("6000"));
        assert_eq!(s.get("user"), Some("envuser"));
        assert_eq!(s.get("application_name"), Some("myapp"));
        assert_eq!(
            s.get_with_origin("port").unwrap().1,
            &Origin::Service(file.clone())
        );
        let e2 = env(&[("PGSERVICEFILE", file.to_str().unwrap())]);
        let err = resolve("service=nope", &e2).unwrap_err();
        assert!(
            err.contains("\"nope\"") && err.contains("svc.conf"),
            "{err}"
        );
        std::fs::write(&file, "[mine]\nhots=x\n").unwrap();
        let err = resolve("service=mine", &e2).unwrap_err();
        assert!(err.contains("line 2") && err.contains("\"hots\""), "{err}");
        let err = resolve("", &env(&[("PGSSLCRL", "/crl")])).unwrap_err();
        assert!(err.contains("PGSSLCRL"), "{err}");
    }

    #[test]
    fn pgpass_matching() {
        let text = "# c\nother:5432:*:bob:no\nlocalhost:5432:app:bob:sock\ndb\\:x:*:*:bob:p\\:w\n*:*:*:*:fallback\n";
        assert_eq!(
            pgpass_lookup(text, Some("/var/run/postgresql"), "5432", "app", "bob").as_deref(),
            Some("sock")
        );
        assert_eq!(
            pgpass_lookup(text, Some("db:x"), "1", "z", "bob").as_deref(),
            Some("p:w")
        );
        assert_eq!(
            pgpass_lookup(text, Some("h"), "1", "z", "amy").as_deref(),
            Some("fallback")
        );
        assert_eq!(
            pgpass_lookup("h:1:d:u:pw\n", Some("h"), "2", "d", "u"),
            None
        );
    }

    #[test]
    fn passfile_permissions_and_precedence() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "h:5432:d:u:from-file\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let e = env(&[("PGPASSFILE", file.to_str().unwrap())]);
        let mut s = resolve("host=h dbname=d", &e).unwrap();
        apply_passfile(&mut s, &e, "u");
        assert_eq!(s.get("password"), Some("from-file"));
        let mut s = resolve("host=h dbname=d password=given", &e).unwrap();
        apply_passfile(&mut s, &e, "u");
        assert_eq!(s.get("password"), Some("given"));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut s = resolve("host=h dbname=d", &e).unwrap();
        apply_passfile(&mut s, &e, "u");
        assert_eq!(s.get("password"), None);
        assert!(s.notes.iter().any(|n| n.contains("chmod 0600")));
    }
}
