//! The run's temporary login role: a member of the producer role only, created by the first
//! caller, for the least-privilege suite and for a producer's DSN (ADR 0049). Its password is
//! random per run and never printed.

use crate::pg::SqlText;
use awa_conformance_core::MAX_WIDTH;
use tokio_postgres::Client;

use super::sweep::run_id;
pub use super::target::Producer;
use super::target::{DbSetup, RunLogin};
use crate::outcome::CaseFailure;
use crate::pg::{quote_ident, Pg, PgError};

/// A failing step of the login role's set-up (the harness's, not the implementation's).
fn setup_fail(db: &DbSetup, what: &str, e: &tokio_postgres::Error) -> CaseFailure {
    CaseFailure::harness(format!("{what}: {}", db.pg.describe(e)))
}

/// A connection error of the set-up.
fn harness(e: PgError) -> CaseFailure {
    CaseFailure::harness(e.to_string())
}

/// The run's temporary login role.
pub fn role_name(db: &DbSetup) -> String {
    format!("{}_login", db.prefix())
}

/// The base name of the queues whose widths are committed for the login role.
pub fn queue_base(db: &DbSetup) -> String {
    format!("{}_priv", db.prefix())
}

/// Setup as the runner's role; `Ok(Err(reason))` = not applicable.
async fn create_role(
    admin: &Client,
    db: &DbSetup,
    password: &str,
) -> Result<Result<(), String>, CaseFailure> {
    let row = admin
        .query_one(
            include_str!("../../sql/role_attributes.sql"),
            &[&db.producer_role],
        )
        .await
        .map_err(|e| setup_fail(db, "reading role attributes", &e))?;
    let (can_create, producer_exists): (bool, bool) = (row.get(0), row.get(1));
    if !can_create {
        return Ok(Err(format!(
            "the runner's role {} lacks CREATEROLE, so it cannot create a temporary login role; \
             rerun with a role that has CREATEROLE to check least privilege",
            db.pg.dsn().user()
        )));
    }
    if !producer_exists {
        return Ok(Err(format!(
            "producer role {} does not exist (see sql::catalog::producer_role_grants)",
            quote_ident(&db.producer_role)
        )));
    }
    let role = quote_ident(&role_name(db));
    // The password is random per run and passed as a literal (DDL takes no parameters);
    // it is hex, so it needs no escaping.
    let mut sql = format!(
        "CREATE ROLE {role} LOGIN INHERIT PASSWORD '{password}'; GRANT {} TO {role}",
        quote_ident(&db.producer_role)
    );
    if !db.plain() {
        // Every session of the login starts with the callers' settings (docs/contract.md
        // §12.4). Constants of the kit, ASCII, with no quote in them: literals are safe here.
        for (name, value) in super::target::CALLER_SETTINGS {
            sql.push_str(&format!("; ALTER ROLE {role} SET {name} TO '{value}'"));
        }
    }
    if let Err(e) = admin.batch_execute(&sql).await {
        if e.code().map(|c| c.code()) == Some("42501") {
            return Ok(Err(format!(
                "cannot create or grant the temporary role: {}",
                db.pg.describe(&e)
            )));
        }
        return Err(setup_fail(db, "creating the temporary login role", &e));
    }
    Ok(Ok(()))
}

/// Create the role and commit the queue widths (run once, see [`producer`]); returns the
/// role's DSN and password, or `Err(reason)` when not applicable.
async fn set_up(db: &DbSetup) -> Result<Result<(crate::pg::Dsn, String), String>, CaseFailure> {
    let admin = db.pg.connect().await.map_err(harness)?;
    // Hex of two random ids: no quoting issues, never printed.
    let password = format!("{}{}", run_id(), run_id());
    if let Err(reason) = create_role(&admin, db, &password).await? {
        return Ok(Err(reason));
    }
    let widths: Vec<i16> = (1..=i16::from(MAX_WIDTH)).collect();
    admin
        .execute(
            &include_str!("../../sql/set_widths.sql").in_schema(db.schema.quoted()),
            &[&queue_base(db), &widths],
        )
        .await
        .map_err(|e| setup_fail(db, "committing queue widths", &e))?;
    Ok(Ok((
        db.pg.dsn().with_user(&role_name(db), &password),
        password,
    )))
}

/// Log in once as the role (proves pg_hba.conf lets it in); the connection is pooled.
fn log_in(dsn: crate::pg::Dsn, password: String) -> Producer {
    let pg = match Pg::new(dsn) {
        Ok(pg) => pg,
        Err(e) => return Producer::Broken(e.to_string()),
    };
    let login = pg.block_on(async {
        let mut pooled = pg.pooled().await?;
        pooled.mark_clean();
        Ok::<_, crate::pg::PgError>(())
    });
    match login {
        Ok(Ok(())) => Producer::Ready(pg, password.into()),
        Ok(Err(e)) | Err(e) => Producer::NotApplicable(format!(
            "cannot log in as the temporary role (pg_hba.conf may not allow it): {e}"
        )),
    }
}

/// The run's login-role door, set up by the first caller.
pub fn producer(db: &DbSetup) -> Producer {
    let Ok(mut slot) = db.producer.lock() else {
        return Producer::Broken("the login-role state was poisoned by a panic".to_owned());
    };
    if let Some(p) = slot.as_ref() {
        return p.clone();
    }
    let made = match db.pg.block_on(set_up(db)) {
        Ok(Ok(Ok((dsn, password)))) => log_in(dsn, password),
        Ok(Ok(Err(reason))) => Producer::NotApplicable(reason),
        Ok(Err(f)) => Producer::Broken(f.message),
        Err(e) => Producer::Broken(e.to_string()),
    };
    *slot = Some(made.clone());
    made
}

impl DbSetup {
    /// Remove everything this run committed (rows of run-scoped queues, their claims, the
    /// temporary role). Idempotent; the committing suites already do this themselves.
    ///
    /// # Errors
    /// [`PgError`] when the sweep could not run.
    pub fn cleanup(&self) -> Result<(), PgError> {
        // Close the login role's sessions before its role is dropped.
        if let Ok(mut slot) = self.producer.lock() {
            drop(slot.take());
        }
        self.pg.block_on(super::sweep::sweep(
            self,
            &self.prefix(),
            &[],
            Some(&role_name(self)),
        ))?
    }

    /// The run's temporary login role (`awa_conformance_<run>_login`, a member of the producer
    /// role only; created by the first caller), its password (for a producer's environment
    /// only: never print it) and the door's connection string that logs in as it. `Err` says
    /// why there is none here (no CREATEROLE, no producer role, pg_hba.conf).
    ///
    /// # Errors
    /// The reason, as the least-privilege suite reports it.
    pub fn run_login(&self) -> Result<RunLogin, String> {
        match producer(self) {
            Producer::Ready(pg, password) => Ok(RunLogin {
                role: role_name(self),
                password: password.to_string(),
                conninfo: pg.dsn().conninfo(),
            }),
            Producer::NotApplicable(why) | Producer::Broken(why) => Err(why),
        }
    }
}
