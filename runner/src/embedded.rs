//! A throwaway PostgreSQL cluster for runs without a DSN: found, started, and removed again.
//!
//! The binaries come from `--pg-bin DIR` / `AWA_PG_BIN`, else [`find_binaries`] looks for
//! `initdb`/`pg_ctl` (via `pg_config --bindir`, then `/usr/lib/postgresql/<newest>/bin`, then
//! `PATH`). [`EmbeddedCluster::start`] creates a temp
//! dir, runs `initdb -A trust`, and starts the server listening only on a unix socket in that
//! dir (so it never collides with another server) on a free port number. PostgreSQL refuses
//! to run as root, so when the runner is root the cluster is created and run as the
//! `postgres` OS user through `runuser -u postgres --`. Dropping the cluster stops it
//! (`pg_ctl stop -m immediate`) and removes the dir; [`EmbeddedCluster::stop_on_ctrl_c`] does
//! the same on Ctrl-C (best effort).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use crate::pg::Dsn;

/// Why an embedded cluster could not be provided.
#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    /// No PostgreSQL server binaries were found.
    #[error(
        "no PostgreSQL server binaries found (looked at `pg_config --bindir`, \
         /usr/lib/postgresql/*/bin and PATH); install postgresql or pass --dsn / DATABASE_URL"
    )]
    NoBinaries,
    /// Running as root without a `postgres` OS user to run the server as.
    #[error(
        "the runner is root and there is no `postgres` OS user: PostgreSQL refuses to run as \
         root; create a `postgres` user, run as another user, or pass --dsn / DATABASE_URL"
    )]
    RootWithoutPostgresUser,
    /// `--pg-bin` / `AWA_PG_BIN` names a directory without the server binaries.
    #[error(
        "--pg-bin / AWA_PG_BIN: {0} holds no initdb and pg_ctl; point it at a PostgreSQL \
         server's bin directory (e.g. /usr/lib/postgresql/16/bin)"
    )]
    NotBinaries(String),
    /// A step (temp dir, initdb, pg_ctl) failed.
    #[error("embedded cluster: {step} failed: {reason}")]
    Step {
        /// What was being done.
        step: &'static str,
        /// Why it failed (command stderr, I/O error).
        reason: String,
    },
}

fn step(step: &'static str) -> impl Fn(String) -> EmbeddedError {
    move |reason| EmbeddedError::Step { step, reason }
}

/// Whether `dir` holds the binaries a cluster is started with.
fn complete(dir: &Path) -> bool {
    dir.join("initdb").is_file() && dir.join("pg_ctl").is_file()
}

/// The directory holding `initdb`, `pg_ctl` and `postgres`, if any.
#[must_use]
pub fn find_binaries() -> Option<PathBuf> {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        if out.status.success() {
            let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if complete(&dir) {
                return Some(dir);
            }
        }
    }
    // Debian/Ubuntu keep server binaries off PATH; take the newest major version.
    if let Ok(entries) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut dirs: Vec<(u32, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let major = e.file_name().to_string_lossy().parse::<u32>().ok()?;
                Some((major, e.path().join("bin")))
            })
            .filter(|(_, d)| complete(d))
            .collect();
        dirs.sort();
        if let Some((_, d)) = dirs.pop() {
            return Some(d);
        }
    }
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).find(|d| complete(d)))
}

fn run(cmd: &mut Command, what: &'static str) -> Result<Output, EmbeddedError> {
    let out = cmd.output().map_err(|e| step(what)(e.to_string()))?;
    if out.status.success() {
        Ok(out)
    } else {
        let mut reason = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        if reason.is_empty() {
            reason = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        }
        Err(step(what)(format!("{} ({})", reason, out.status)))
    }
}

/// The effective user id (via `id -u`: the crate forbids `unsafe`, so no `geteuid`).
fn euid() -> Option<u32> {
    let out = Command::new("id").arg("-u").output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn user_ids(user: &str) -> Option<(u32, u32)> {
    let uid = Command::new("id").args(["-u", user]).output().ok()?;
    let gid = Command::new("id").args(["-g", user]).output().ok()?;
    if !uid.status.success() || !gid.status.success() {
        return None;
    }
    Some((
        String::from_utf8_lossy(&uid.stdout).trim().parse().ok()?,
        String::from_utf8_lossy(&gid.stdout).trim().parse().ok()?,
    ))
}

fn free_port() -> Result<u16, EmbeddedError> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| step("pick a free port")(e.to_string()))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| step("pick a free port")(e.to_string()))
}

struct Inner {
    bindir: PathBuf,
    dir: Option<tempfile::TempDir>,
    as_postgres: bool,
}

impl Inner {
    fn command(&self, program: &str) -> Command {
        let bin = self.bindir.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(bin);
            c
        } else {
            Command::new(bin)
        }
    }

    fn stop(&mut self) {
        if let Some(dir) = self.dir.take() {
            // Immediate: the cluster is thrown away, no checkpoint needed. Errors are ignored
            // on purpose: this is best-effort teardown and the dir is removed regardless.
            let _ = self
                .command("pg_ctl")
                .args(["stop", "-m", "immediate", "-w", "-D"])
                .arg(dir.path().join("data"))
                .output();
            let _ = dir.close();
        }
    }
}

/// A running throwaway cluster; stopped and removed on drop.
pub struct EmbeddedCluster {
    inner: Arc<Mutex<Inner>>,
    dsn: Dsn,
}

impl std::fmt::Debug for EmbeddedCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedCluster")
            .field("dsn", &self.dsn)
            .finish()
    }
}

impl EmbeddedCluster {
    /// initdb + start a cluster with the binaries in `bindir`.
    ///
    /// # Errors
    /// [`EmbeddedError`] naming the failed step.
    pub fn start(bindir: &Path) -> Result<Self, EmbeddedError> {
        let as_postgres = euid() == Some(0);
        let owner = if as_postgres {
            Some(user_ids("postgres").ok_or(EmbeddedError::RootWithoutPostgresUser)?)
        } else {
            None
        };
        let dir = tempfile::Builder::new()
            .prefix("awa-conformance-pg-")
            .tempdir()
            .map_err(|e| step("create a temp dir")(e.to_string()))?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .map_err(|e| step("chown the temp dir to postgres")(e.to_string()))?;
        }
        let inner = Inner {
            bindir: bindir.to_owned(),
            dir: Some(dir),
            as_postgres,
        };
        let path = inner
            .dir
            .as_ref()
            .map(|d| d.path().to_owned())
            .ok_or_else(|| step("create a temp dir")("missing".to_owned()))?;
        let data = path.join("data");
        let inner = Arc::new(Mutex::new(inner));
        let guard = inner.lock().map_err(|e| step("lock")(e.to_string()))?;
        run(
            guard
                .command("initdb")
                .args([
                    "-A",
                    "trust",
                    "-U",
                    "postgres",
                    "-E",
                    "UTF8",
                    "--no-sync",
                    "-D",
                ])
                .arg(&data),
            "initdb",
        )?;
        let port = free_port()?;
        // Room for a run at the default test threads (README, "What a run needs from the
        // database"), with some to spare.
        let max_connections = (crate::contract::environment::connections_needed(
            crate::contract::environment::test_threads(None),
            true,
        ) + 10)
            .max(50);
        let opts = format!(
            "-c listen_addresses='' -k {} -p {port} -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections={max_connections}",
            path.display()
        );
        run(
            guard
                .command("pg_ctl")
                .args(["start", "-w", "-t", "60", "-D"])
                .arg(&data)
                .arg("-l")
                .arg(path.join("server.log"))
                .arg("-o")
                .arg(opts),
            "pg_ctl start",
        )
        .map_err(|e| {
            let log = std::fs::read_to_string(path.join("server.log")).unwrap_or_default();
            match e {
                EmbeddedError::Step { step, reason } => EmbeddedError::Step {
                    step,
                    reason: format!("{reason}; server log: {}", log.trim()),
                },
                other => other,
            }
        })?;
        drop(guard);
        Ok(Self {
            inner,
            dsn: Dsn::unix_socket(&path, port, "postgres", "postgres"),
        })
    }

    /// Start a cluster with the binaries in `pg_bin` (`--pg-bin` / `AWA_PG_BIN`), or else the
    /// ones [`find_binaries`] finds.
    ///
    /// # Errors
    /// [`EmbeddedError::NotBinaries`] for a `pg_bin` without them, [`EmbeddedError::NoBinaries`]
    /// when none are found, or a failed step.
    pub fn start_default(pg_bin: Option<&Path>) -> Result<Self, EmbeddedError> {
        let bindir = match pg_bin {
            Some(dir) if complete(dir) => dir.to_owned(),
            Some(dir) => return Err(EmbeddedError::NotBinaries(dir.display().to_string())),
            None => find_binaries().ok_or(EmbeddedError::NoBinaries)?,
        };
        Self::start(&bindir)
    }

    /// What was started, for the run's provenance: `embedded (PostgreSQL 18.4, <bindir>)`.
    #[must_use]
    pub fn describe(&self) -> String {
        let bindir = self
            .inner
            .lock()
            .map(|i| i.bindir.clone())
            .unwrap_or_default();
        // `postgres --version` prints `postgres (PostgreSQL) 18.4`, and a distribution's
        // build adds its own words after (`15.18 (Debian 15.18-0+deb12u1)`); the cluster is
        // running, so the binary is there to ask.
        let version = Command::new(bindir.join("postgres"))
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| {
                let text = String::from_utf8_lossy(&o.stdout).into_owned();
                let (_, rest) = text.split_once("(PostgreSQL)")?;
                rest.split_whitespace().next().map(str::to_owned)
            })
            .unwrap_or_else(|| "version unknown".to_owned());
        format!("embedded (PostgreSQL {version}, {})", bindir.display())
    }

    /// The superuser DSN (unix socket, trust auth, no password).
    #[must_use]
    pub fn dsn(&self) -> &Dsn {
        &self.dsn
    }

    /// Stop the server and remove its directory (idempotent; drop does it too).
    pub fn stop(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.stop();
        }
    }

    /// On Ctrl-C, stop and remove the cluster, then exit with 130 (best effort). Must be
    /// called from inside a tokio runtime (the DB door's).
    pub fn stop_on_ctrl_c(&self, rt: &tokio::runtime::Handle) {
        let inner = Arc::clone(&self.inner);
        rt.spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                if let Ok(mut inner) = inner.lock() {
                    inner.stop();
                }
                // The run is being abandoned by the user: there is no result to return to
                // main, and the cluster is already gone; exit like an interrupted shell does.
                std::process::exit(130);
            }
        });
    }
}

impl Drop for EmbeddedCluster {
    fn drop(&mut self) {
        self.stop();
    }
}
