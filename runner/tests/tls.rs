//! libpq parity against a real PostgreSQL with `ssl = on` and certificates made here: sslmode
//! semantics (verify-full, verify-ca, require), sslrootcert, client certificates, the password
//! file, the service file and the `PG*` variables; and that no OpenSSL is linked.
//!
//! The test starts its own cluster (TCP on `AWA_TLS_TEST_PORT`, else a free port; sockets in a
//! temp dir) and stops it at the end. Without PostgreSQL server binaries the cluster tests show
//! as ignored, and fail with `AWA_REQUIRE_DB=1`.

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use awa_conformance_runner::pg::{Dsn, DsnSource, Pg};

const BIN: &str = env!("CARGO_BIN_EXE_awa-conformance");
const PASSWORD: &str = "pw-secret-4711";

struct Cluster {
    dir: tempfile::TempDir,
    port: u16,
    bindir: PathBuf,
    as_postgres: bool,
}

impl Cluster {
    fn certs(&self) -> PathBuf {
        self.dir.path().join("certs")
    }

    fn cert(&self, name: &str) -> String {
        self.certs().join(name).to_str().unwrap().to_owned()
    }

    fn pg_ctl(&self) -> Command {
        let bin = self.bindir.join("pg_ctl");
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(bin);
            c
        } else {
            Command::new(bin)
        }
    }

    fn stop(&self) {
        let _ = self
            .pg_ctl()
            .args(["stop", "-m", "immediate", "-w", "-D"])
            .arg(self.dir.path().join("data"))
            .output();
    }
}

static CLUSTER: OnceLock<Cluster> = OnceLock::new();

fn write(path: &Path, text: &str, mode: u32) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown_postgres(path: &Path) {
    let id = |flag: &str| -> u32 {
        let out = Command::new("id")
            .args([flag, "postgres"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    std::os::unix::fs::chown(path, Some(id("-u")), Some(id("-g"))).unwrap();
}

/// A CA, a server certificate for `localhost` only, a client certificate for `certuser`, and
/// an unrelated CA.
fn make_certs(dir: &Path, as_postgres: bool) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    std::fs::create_dir(dir).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ca = |name: &str| {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, name);
        (p.self_signed(&key).unwrap(), key)
    };
    let (ca_cert, ca_key) = ca("awa-conformance test CA");
    let (wrong_ca, _) = ca("some other CA");
    let leaf = |names: Vec<String>, cn: &str| {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(names).unwrap();
        p.distinguished_name.push(DnType::CommonName, cn);
        (p.signed_by(&key, &ca_cert, &ca_key).unwrap(), key)
    };
    let (server, server_key) = leaf(vec!["localhost".to_owned()], "localhost");
    let (client, client_key) = leaf(Vec::new(), "certuser");
    write(&dir.join("ca.pem"), &ca_cert.pem(), 0o644);
    write(&dir.join("wrong_ca.pem"), &wrong_ca.pem(), 0o644);
    write(&dir.join("server.crt"), &server.pem(), 0o644);
    write(&dir.join("server.key"), &server_key.serialize_pem(), 0o600);
    write(&dir.join("client.crt"), &client.pem(), 0o644);
    write(&dir.join("client.key"), &client_key.serialize_pem(), 0o600);
    if as_postgres {
        chown_postgres(&dir.join("server.key"));
    }
}

fn free_port() -> u16 {
    if let Some(p) = std::env::var("AWA_TLS_TEST_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
    {
        return p;
    }
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start() -> Cluster {
    let bindir = awa_conformance_runner::embedded::find_binaries().unwrap();
    let uid = Command::new("id").arg("-u").output().unwrap();
    let as_postgres = String::from_utf8_lossy(&uid.stdout).trim() == "0";
    let dir = tempfile::Builder::new()
        .prefix("awa-tls-test-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    if as_postgres {
        chown_postgres(dir.path());
    }
    let cluster = Cluster {
        port: free_port(),
        bindir,
        as_postgres,
        dir,
    };
    make_certs(&cluster.certs(), as_postgres);
    let data = cluster.dir.path().join("data");
    let initdb = cluster.bindir.join("initdb");
    let mut cmd = if as_postgres {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(initdb);
        c
    } else {
        Command::new(initdb)
    };
    let out = cmd
        .args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success(), "initdb: {}", text(&out.stderr));
    let conf = format!(
        "\nssl = on\nssl_cert_file = '{c}/server.crt'\nssl_key_file = '{c}/server.key'\n\
         ssl_ca_file = '{c}/ca.pem'\nlisten_addresses = 'localhost'\nport = {port}\n\
         unix_socket_directories = '{d}'\nfsync = off\n",
        c = cluster.certs().display(),
        d = cluster.dir.path().display(),
        port = cluster.port
    );
    let mut text_conf = std::fs::read_to_string(data.join("postgresql.conf")).unwrap();
    text_conf.push_str(&conf);
    std::fs::write(data.join("postgresql.conf"), text_conf).unwrap();
    std::fs::write(
        data.join("pg_hba.conf"),
        "local all all trust\n\
         hostnossl all all all reject\n\
         hostssl all certuser 127.0.0.1/32 cert\n\
         hostssl all certuser ::1/128 cert\n\
         hostssl all all 127.0.0.1/32 scram-sha-256\n\
         hostssl all all ::1/128 scram-sha-256\n",
    )
    .unwrap();
    let out = cluster
        .pg_ctl()
        .args(["start", "-w", "-t", "60", "-D"])
        .arg(&data)
        .arg("-l")
        .arg(cluster.dir.path().join("server.log"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pg_ctl start: {} {}",
        text(&out.stderr),
        std::fs::read_to_string(cluster.dir.path().join("server.log")).unwrap_or_default()
    );
    let socket = Dsn::unix_socket(cluster.dir.path(), cluster.port, "postgres", "postgres");
    let pg = Pg::new(socket.clone()).unwrap();
    pg.block_on(async {
        let c = Pg::connect_with(&socket).await.unwrap();
        c.batch_execute(&format!(
            "CREATE ROLE certuser LOGIN SUPERUSER; \
             CREATE ROLE pwuser LOGIN SUPERUSER PASSWORD '{PASSWORD}'"
        ))
        .await
        .unwrap();
    })
    .unwrap();
    cluster
}

fn cluster() -> &'static Cluster {
    CLUSTER.get_or_init(start)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Connect through the runner's door; `Ok("<ssl> <user> <application_name>")` or the error.
fn connect(dsn: &str, vars: &[(&str, &str)]) -> Result<String, String> {
    let vars = env(vars);
    let dsn = match Dsn::resolve_from(Some(dsn), &vars).map_err(|e| e.to_string())? {
        Some(d) => d,
        None => Dsn::parse("", DsnSource::LibpqEnv, &vars).map_err(|e| e.to_string())?,
    };
    let pg = Pg::new(dsn.clone()).unwrap();
    pg.block_on(async {
        let c = Pg::connect_with(&dsn).await.map_err(|e| e.to_string())?;
        let row = c
            .query_one(
                "SELECT s.ssl::text || ' ' || current_user || ' ' || a.application_name \
                 FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
                 WHERE s.pid = pg_backend_pid()",
                &[],
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok(row.get(0))
    })
    .unwrap()
}

fn base(host: &str, user: &str) -> String {
    format!(
        "host={host} port={} user={user} dbname=postgres",
        cluster().port
    )
}

fn pw(host: &str) -> String {
    format!("{} password={PASSWORD}", base(host, "pwuser"))
}

fn assert_tls_failure(res: Result<String, String>) {
    let err = res.expect_err("must not connect");
    assert!(err.contains("TLS handshake failed"), "{err}");
    assert!(!err.contains("server is running"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
}

fn verify_full_needs_the_right_ca_and_host_name() {
    let c = cluster();
    let ok = connect(
        &format!(
            "{} sslmode=verify-full sslrootcert={}",
            pw("localhost"),
            c.cert("ca.pem")
        ),
        &[],
    )
    .unwrap();
    assert!(ok.starts_with("true pwuser"), "{ok}");
    assert_tls_failure(connect(
        &format!(
            "{} sslmode=verify-full sslrootcert={}",
            pw("localhost"),
            c.cert("wrong_ca.pem")
        ),
        &[],
    ));
    // The certificate names localhost only.
    assert_tls_failure(connect(
        &format!(
            "{} sslmode=verify-full sslrootcert={}",
            pw("127.0.0.1"),
            c.cert("ca.pem")
        ),
        &[],
    ));
}

fn verify_ca_checks_the_chain_not_the_host_name() {
    let c = cluster();
    let ok = connect(
        &format!(
            "{} sslmode=verify-ca sslrootcert={}",
            pw("127.0.0.1"),
            c.cert("ca.pem")
        ),
        &[],
    )
    .unwrap();
    assert!(ok.starts_with("true pwuser"), "{ok}");
    assert_tls_failure(connect(
        &format!(
            "{} sslmode=verify-ca sslrootcert={}",
            pw("127.0.0.1"),
            c.cert("wrong_ca.pem")
        ),
        &[],
    ));
}

fn require_encrypts_and_checks_only_a_given_root() {
    let c = cluster();
    let ok = connect(&format!("{} sslmode=require", pw("127.0.0.1")), &[]).unwrap();
    assert!(ok.starts_with("true pwuser"), "{ok}");
    // prefer takes TLS when offered (the server rejects plaintext here).
    let ok = connect(&format!("{} sslmode=prefer", pw("127.0.0.1")), &[]).unwrap();
    assert!(ok.starts_with("true"), "{ok}");
    // libpq: with a root file, require checks the chain.
    assert_tls_failure(connect(
        &format!(
            "{} sslmode=require sslrootcert={}",
            pw("127.0.0.1"),
            c.cert("wrong_ca.pem")
        ),
        &[],
    ));
    let err = connect(&format!("{} sslmode=disable", pw("127.0.0.1")), &[]).unwrap_err();
    assert!(err.contains("no encryption"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
}

fn client_certificates_log_in() {
    let c = cluster();
    let with_cert = format!(
        "{} sslmode=verify-full sslrootcert={} sslcert={} sslkey={}",
        base("localhost", "certuser"),
        c.cert("ca.pem"),
        c.cert("client.crt"),
        c.cert("client.key")
    );
    let ok = connect(&with_cert, &[]).unwrap();
    assert!(ok.starts_with("true certuser"), "{ok}");
    let err = connect(
        &format!(
            "{} sslmode=verify-full sslrootcert={}",
            base("localhost", "certuser"),
            c.cert("ca.pem")
        ),
        &[],
    )
    .unwrap_err();
    assert!(err.contains("(28000)"), "{err}");
    assert!(err.contains("client certificate"), "{err}");
    // The same through PGSSLCERT / PGSSLKEY / PGSSLROOTCERT / PGSSLMODE.
    let ok = connect(
        &base("localhost", "certuser"),
        &[
            ("PGSSLMODE", "verify-full"),
            ("PGSSLROOTCERT", &c.cert("ca.pem")),
            ("PGSSLCERT", &c.cert("client.crt")),
            ("PGSSLKEY", &c.cert("client.key")),
        ],
    )
    .unwrap();
    assert!(ok.starts_with("true certuser"), "{ok}");
    let err = connect(
        &base("localhost", "certuser"),
        &[
            ("PGSSLMODE", "verify-full"),
            ("PGSSLROOTCERT", &c.cert("ca.pem")),
            ("PGSSLCERT", &c.cert("missing.crt")),
            ("PGSSLKEY", &c.cert("client.key")),
        ],
    )
    .unwrap_err();
    assert!(
        err.contains("sslcert") && err.contains("missing.crt"),
        "{err}"
    );
}

fn password_file_service_file_and_environment() {
    let c = cluster();
    let dir = tempfile::tempdir().unwrap();
    let pgpass = dir.path().join("pgpass");
    write(
        &pgpass,
        &format!("localhost:{}:*:pwuser:{PASSWORD}\n", c.port),
        0o600,
    );
    let service = dir.path().join("services.conf");
    write(
        &service,
        &format!(
            "# test services\n[awa]\nhost=localhost\nport={}\nuser=pwuser\ndbname=postgres\n\
             sslmode=verify-full\nsslrootcert={}\n",
            c.port,
            c.cert("ca.pem")
        ),
        0o644,
    );
    let files = [
        ("PGPASSFILE", pgpass.to_str().unwrap()),
        ("PGSERVICEFILE", service.to_str().unwrap()),
    ];
    let ok = connect("service=awa", &files).unwrap();
    assert!(ok.starts_with("true pwuser awa-conformance"), "{ok}");
    let mut vars = files.to_vec();
    vars.extend([("PGSERVICE", "awa"), ("PGAPPNAME", "from-pgappname")]);
    let ok = connect("", &vars).unwrap();
    assert_eq!(ok, "true pwuser from-pgappname");
    // The DSN wins over the service file: a wrong root in the DSN fails.
    assert_tls_failure(connect(
        &format!("service=awa sslrootcert={}", c.cert("wrong_ca.pem")),
        &files,
    ));
    // A password file others can read is ignored, and the failure says so.
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = connect("service=awa", &files).unwrap_err();
    assert!(err.contains("chmod 0600"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
    // A wrong password is refused with its own hint, never printed.
    let err = connect(
        &format!(
            "{} password=not-{PASSWORD} sslmode=require",
            base("localhost", "pwuser")
        ),
        &[],
    )
    .unwrap_err();
    assert!(err.contains("was refused: check the password"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
}

fn the_binary_connects_with_a_client_certificate() {
    let c = cluster();
    let dsn = format!(
        "postgresql://certuser@localhost:{}/postgres?sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}",
        c.port,
        c.cert("ca.pem"),
        c.cert("client.crt"),
        c.cert("client.key")
    );
    let out = Command::new(BIN)
        .args(["schema", "status", "--dsn", &dsn])
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("missing:"),
        "{}",
        text(&out.stdout)
    );
}

fn no_openssl_is_linked() {
    let out = Command::new("ldd").arg(BIN).output().unwrap();
    let libs = text(&out.stdout);
    assert!(out.status.success(), "ldd failed: {}", text(&out.stderr));
    assert!(!libs.contains("libssl"), "{libs}");
    assert!(!libs.contains("libcrypto"), "{libs}");
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let have = awa_conformance_runner::embedded::find_binaries().is_some();
    let required = std::env::var("AWA_REQUIRE_DB").as_deref() == Ok("1");
    let cluster_tests: [(&str, fn()); 6] = [
        (
            "verify_full_needs_the_right_ca_and_host_name",
            verify_full_needs_the_right_ca_and_host_name,
        ),
        (
            "verify_ca_checks_the_chain_not_the_host_name",
            verify_ca_checks_the_chain_not_the_host_name,
        ),
        (
            "require_encrypts_and_checks_only_a_given_root",
            require_encrypts_and_checks_only_a_given_root,
        ),
        ("client_certificates_log_in", client_certificates_log_in),
        (
            "password_file_service_file_and_environment",
            password_file_service_file_and_environment,
        ),
        (
            "the_binary_connects_with_a_client_certificate",
            the_binary_connects_with_a_client_certificate,
        ),
    ];
    let mut trials: Vec<libtest_mimic::Trial> = cluster_tests
        .into_iter()
        .map(|(name, f)| {
            libtest_mimic::Trial::test(name, move || {
                if !have {
                    return Err("AWA_REQUIRE_DB=1 but no PostgreSQL server binaries: run \
                                scripts/install-deps.sh"
                        .into());
                }
                f();
                Ok(())
            })
            .with_ignored_flag(!have && !required)
        })
        .collect();
    trials.push(libtest_mimic::Trial::test("no_openssl_is_linked", || {
        no_openssl_is_linked();
        Ok(())
    }));
    let conclusion = libtest_mimic::run(&args, trials);
    if let Some(c) = CLUSTER.get() {
        c.stop();
    }
    conclusion.exit()
}
