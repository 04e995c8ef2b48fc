//! Released Awa as preflight recognises it: a `schema_version` table and no `insert_job`
//! (docs/released-awa.md R8). Every released schema version is recognised, and named with the
//! Awa release series that installs it ([`RELEASES`]); what the compat profile can check
//! depends on what that version's SQL has:
//!
//! * no `insert_job_compat` (schema versions before 10, awa-cli before 0.5.5): nothing, and
//!   preflight refuses the run in one line ([`Released::too_old`]);
//! * `insert_job_compat` without `p_ordering_key`, on the canonical engine only, validating by
//!   CHECK constraints (0.5.x, schema versions 10 and 11): unique keys, claims and validation
//!   bounds;
//! * `insert_job_compat` with `p_ordering_key`, queue storage, its own ordered validation
//!   (0.6.x, schema versions 39 and 40): everything, once queue storage is active.
//!
//! The compat profile (`sql::compat::*`) and the producer engine's released target read what
//! was found here.

use crate::pg::SqlText;
use tokio_postgres::Client;

use crate::pg::quote_ident;

/// One released schema version: the Awa release series that installs it, and the first and
/// last awa-cli releases on PyPI whose `awa migrate` stops there (docs/released-awa.md R8.1,
/// observed by migrating an empty database with every release).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// `max(version)` of `schema_version` after `awa migrate`.
    pub schema_version: i32,
    /// The series it is named by in provenance and messages.
    pub series: &'static str,
    /// The first awa-cli release that installs it.
    pub first: &'static str,
    /// The last awa-cli release that installs it.
    pub last: &'static str,
}

impl Release {
    /// `0.5.5` or `0.5.6–0.5.7`.
    #[must_use]
    pub fn releases(&self) -> String {
        if self.first == self.last {
            self.first.to_owned()
        } else {
            format!("{}–{}", self.first, self.last)
        }
    }
}

const fn release(
    schema_version: i32,
    series: &'static str,
    first: &'static str,
    last: &'static str,
) -> Release {
    Release {
        schema_version,
        series,
        first,
        last,
    }
}

/// Every schema version a released awa-cli installs, oldest first (0.5.4 was never published).
pub const RELEASES: [Release; 8] = [
    release(3, "0.3.x", "0.3.0", "0.3.0"),
    release(4, "0.4.x", "0.4.0", "0.4.0"),
    release(5, "0.4.x", "0.4.1", "0.5.0"),
    release(6, "0.5.x", "0.5.1", "0.5.3"),
    release(10, "0.5.x", "0.5.5", "0.5.5"),
    release(11, "0.5.x", "0.5.6", "0.5.7"),
    release(39, "0.6.x", "0.6.0", "0.6.1"),
    release(40, "0.6.x", "0.6.2", "0.6.9"),
];

/// The oldest schema version the compat profile checks: the first with `insert_job_compat`.
pub const OLDEST_CHECKED: i32 = 10;

/// The first schema version whose `insert_job_compat` validates its arguments itself, with the
/// messages and the order of docs/released-awa.md R2.2 (migration 12, "Queue storage
/// compatibility layer"; first released in 0.6.0 at schema version 39). Before it, CHECK
/// constraints on `jobs_hot` and `scheduled_jobs` refuse the same values with the same
/// SQLSTATE, naming the constraint instead.
pub const VALIDATION_IN_FUNCTION: i32 = 12;

/// How a released `insert_job_compat` refuses an out-of-range argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validation {
    /// Its own checks: 23514 with R2.2's messages, the first failing check in R2.2's order.
    Function,
    /// CHECK constraints of the table the job goes to (`scheduled_jobs_kind_length`, …): 23514
    /// naming the constraint, with PostgreSQL's message; PostgreSQL evaluates them in name
    /// order, so no order is released behaviour.
    Constraints,
}

/// Released Awa as preflight found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    /// `max(version)` of `schema_version` (0: an empty table).
    pub schema_version: i32,
    /// `active_queue_storage_schema()`: the queue-storage schema, or `None` on the canonical
    /// engine (always, before 0.6.0).
    pub storage_schema: Option<String>,
    /// `insert_job_compat` (taking `p_state`) exists: from schema version 10 (0.5.5).
    pub compat: bool,
    /// It takes `p_ordering_key` (first released in 0.6.0).
    pub ordering_key: bool,
    /// `active_queue_storage_schema()` exists: queue storage can be active (first released in
    /// 0.6.0).
    pub queue_storage: bool,
}

impl Released {
    /// The release this schema version is, when a released awa-cli installs it.
    #[must_use]
    pub fn release(&self) -> Option<&'static Release> {
        RELEASES
            .iter()
            .find(|r| r.schema_version == self.schema_version)
    }

    /// The Awa release series of the schema version: `0.5.x`; for a version no release
    /// installs, where it falls (`newer than 0.6.9`, `between 0.5.7 and 0.6.0`).
    #[must_use]
    pub fn series(&self) -> String {
        if let Some(r) = self.release() {
            return r.series.to_owned();
        }
        let v = self.schema_version;
        let before = RELEASES.iter().rev().find(|r| r.schema_version < v);
        let after = RELEASES.iter().find(|r| r.schema_version > v);
        match (before, after) {
            (Some(b), Some(a)) => format!("between {} and {}", b.last, a.first),
            (Some(b), None) => format!("newer than {}", b.last),
            (None, Some(a)) => format!("older than {}", a.first),
            (None, None) => "unknown".to_owned(),
        }
    }

    /// `released Awa 0.5.x, schema version 11`: the name provenance and messages use.
    #[must_use]
    pub fn name(&self) -> String {
        format!(
            "released Awa {}, schema version {}",
            self.series(),
            self.schema_version
        )
    }

    /// The provenance line naming what was checked.
    #[must_use]
    pub fn describe(&self) -> String {
        let entry = match (self.compat, self.ordering_key) {
            (false, _) => "no insert_job_compat",
            (true, false) => "insert_job_compat without p_ordering_key",
            (true, true) => "insert_job_compat",
        };
        format!("{}, {entry}, storage engine {}", self.name(), self.engine())
    }

    /// The storage engine's name.
    #[must_use]
    pub fn engine(&self) -> &'static str {
        if self.storage_schema.is_some() {
            "queue_storage"
        } else {
            "canonical"
        }
    }

    /// How this version's `insert_job_compat` refuses out-of-range arguments.
    #[must_use]
    pub fn validation(&self) -> Validation {
        if self.schema_version >= VALIDATION_IN_FUNCTION {
            Validation::Function
        } else {
            Validation::Constraints
        }
    }

    /// Why nothing can be checked (the version has no `insert_job_compat`), as one line naming
    /// the version found, the oldest checked and the fix; `None`: the compat profile runs.
    #[must_use]
    pub fn too_old(&self, schema: &str) -> Option<String> {
        if self.compat {
            return None;
        }
        let installed_by = self
            .release()
            .map(|r| format!(" (installed by awa-cli {})", r.releases()))
            .unwrap_or_default();
        let oldest = RELEASES
            .iter()
            .find(|r| r.schema_version == OLDEST_CHECKED)
            .map_or("0.5.5", |r| r.first);
        Some(format!(
            "schema {} holds {}{installed_by}, which has no insert_job_compat, so the kit has \
             nothing to check: the oldest released Awa it checks is schema version \
             {OLDEST_CHECKED} (awa-cli {oldest}); upgrade the database with `awa migrate` of \
             awa-cli {oldest} or later (0.6.x checks the most), or pass --schema naming the \
             schema that holds the contract",
            quote_ident(schema),
            self.name()
        ))
    }

    /// Why the cases that need an ordering key's enqueue shard (`ordering`, `partitioned`, the
    /// producer engine) do not apply, naming the version; `None` when they do.
    #[must_use]
    pub fn no_enqueue_shard(&self, schema: &str) -> Option<String> {
        if !self.ordering_key || !self.queue_storage {
            return Some(format!(
                "{} has no ordering key and no enqueue shard: its insert_job_compat takes no \
                 p_ordering_key and it has no queue storage, which both arrive with released \
                 Awa 0.6.0 (schema version 39); migrate with awa-cli 0.6.x to check them",
                self.name()
            ));
        }
        if self.storage_schema.is_none() {
            let s = quote_ident(schema);
            return Some(format!(
                "the storage engine of {} is canonical, which keeps no enqueue shard: activate \
                 queue storage (a fresh 0.6.x worker does: SELECT \
                 {s}.storage_auto_finalize_if_fresh('{schema}')) and rerun",
                self.name()
            ));
        }
        None
    }

    /// Why a compat case that checks R2.2's first-failure order does not apply; `None` when
    /// it does.
    #[must_use]
    pub fn no_validation_order(&self) -> Option<String> {
        match self.validation() {
            Validation::Function => None,
            Validation::Constraints => Some(format!(
                "{} validates with CHECK constraints on jobs_hot and scheduled_jobs, which \
                 PostgreSQL evaluates in constraint-name order, so no first-failure order is \
                 released behaviour; insert_job_compat checks in R2.2's order from schema \
                 version {VALIDATION_IN_FUNCTION} (released in 0.6.0, schema version 39)",
                self.name()
            )),
        }
    }

    /// Why a contract case (`sql::…` outside the compat suite) that needs `requires`
    /// (capabilities of `contract_capabilities()`) does not apply: from what the case needs,
    /// never from its name.
    #[must_use]
    pub fn contract_case_reason(&self, requires: &[String]) -> String {
        const NO_CONCURRENCY: [&str; 4] = [
            "concurrency_digest",
            "concurrency_shard",
            "routing_precedence",
            "move_shard",
        ];
        let what = if requires
            .iter()
            .any(|c| NO_CONCURRENCY.contains(&c.as_str()))
        {
            "released Awa has no concurrency key (no digest, no concurrency shard, no route \
             source) and no move_shard"
        } else {
            "released Awa has no insert_job, job_routing or contract_capabilities"
        };
        format!(
            "{what} ({}): this case checks contract v1, which arrives with awa.insert_job; the \
             sql::compat::* cases check insert_job_compat instead",
            self.name()
        )
    }
}

/// Whether `schema` holds released Awa (see the module docs), of any released schema version,
/// checkable or not; `None`: it does not (the caller reports the contract schema as missing).
///
/// # Errors
/// The catalog query failed.
pub async fn detect(
    client: &Client,
    schema: &str,
) -> Result<Option<Released>, tokio_postgres::Error> {
    let row = client
        .query_one(include_str!("../../sql/compat_detect.sql"), &[&schema])
        .await?;
    let (versions, compat, ordering_key, insert_job, queue_storage, shape): (
        bool,
        bool,
        bool,
        bool,
        bool,
        bool,
    ) = (
        row.get(0),
        row.get(1),
        row.get(2),
        row.get(3),
        row.get(4),
        row.get(5),
    );
    // insert_job wins: a future Awa with both is checked on the contract (ADR 0044).
    if !versions || insert_job || !(compat || shape) {
        return Ok(None);
    }
    let s = quote_ident(schema);
    let schema_version = client
        .query_one(
            &include_str!("../../sql/compat_released.sql").in_schema(&s),
            &[],
        )
        .await?
        .get::<_, Option<i32>>(0)
        .unwrap_or(0);
    let storage_schema = if queue_storage {
        client
            .query_one(
                &include_str!("../../sql/compat_storage.sql").in_schema(&s),
                &[],
            )
            .await?
            .get(0)
    } else {
        None
    };
    Ok(Some(Released {
        schema_version,
        storage_schema,
        compat,
        ordering_key,
        queue_storage,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(schema_version: i32) -> Released {
        Released {
            schema_version,
            storage_schema: None,
            compat: schema_version >= OLDEST_CHECKED,
            ordering_key: schema_version >= 39,
            queue_storage: schema_version >= 39,
        }
    }

    #[test]
    fn every_released_version_is_named_by_its_series() {
        assert_eq!(at(11).name(), "released Awa 0.5.x, schema version 11");
        assert_eq!(at(10).name(), "released Awa 0.5.x, schema version 10");
        assert_eq!(at(39).name(), "released Awa 0.6.x, schema version 39");
        assert_eq!(at(40).name(), "released Awa 0.6.x, schema version 40");
        assert_eq!(at(3).series(), "0.3.x");
        assert_eq!(at(41).series(), "newer than 0.6.9");
        assert_eq!(at(25).series(), "between 0.5.7 and 0.6.0");
        assert_eq!(at(1).series(), "older than 0.3.0");
        let versions: Vec<i32> = RELEASES.iter().map(|r| r.schema_version).collect();
        let mut sorted = versions.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(
            versions, sorted,
            "RELEASES must be ascending, one row per version"
        );
    }

    #[test]
    fn what_each_version_can_express() {
        let old = at(11);
        assert_eq!(old.validation(), Validation::Constraints);
        assert!(old
            .no_validation_order()
            .is_some_and(|w| w.contains("0.5.x")));
        assert!(old
            .no_enqueue_shard("awa")
            .is_some_and(|w| w.contains("schema version 11") && w.contains("p_ordering_key")));
        assert_eq!(
            old.describe(),
            "released Awa 0.5.x, schema version 11, insert_job_compat without p_ordering_key, \
             storage engine canonical"
        );
        let new = Released {
            storage_schema: Some("awa_qs".to_owned()),
            ..at(40)
        };
        assert_eq!(new.validation(), Validation::Function);
        assert_eq!(new.no_validation_order(), None);
        assert_eq!(new.no_enqueue_shard("awa"), None);
        assert!(at(40)
            .no_enqueue_shard("awa")
            .is_some_and(|w| w.contains("storage_auto_finalize_if_fresh")));
        assert_eq!(new.too_old("awa"), None);
    }

    #[test]
    fn a_version_without_insert_job_compat_is_refused_in_one_line() {
        let msg = at(6).too_old("awa").unwrap();
        assert!(!msg.contains('\n'), "{msg}");
        for part in [
            "released Awa 0.5.x, schema version 6",
            "awa-cli 0.5.1–0.5.3",
            "schema version 10 (awa-cli 0.5.5)",
            "awa migrate",
        ] {
            assert!(msg.contains(part), "{part:?} not in {msg}");
        }
        assert!(!msg.contains("schema install"), "{msg}");
    }
}
