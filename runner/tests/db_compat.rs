//! The compat profile against real released Awa, the newest and the oldest it checks: a
//! database migrated by the released CLI (`awa migrate`, awa-cli 0.6.9 from
//! tests/requirements.txt; awa-cli 0.5.5 from tests/requirements-awa-oldest.txt) is recognised,
//! checked as far as its schema version expresses, and left exactly as found; every compat case
//! fails on some mutant of that release; and a release older than `insert_job_compat` is
//! refused in one line naming its version.

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

mod support;

use std::collections::BTreeSet;
use std::process::Command;

use support::{
    awa_cli, awa_cli_oldest, cases_with, dsn, main_with, messages, run, scalar, sql, suffix, text,
    with_db, Gate,
};

/// A database of the cluster, dropped on drop.
struct Db {
    admin: String,
    name: String,
    url: String,
}

impl Db {
    /// A fresh database migrated by the released CLI (0.6.9); `queue_storage` promotes it as
    /// a fresh 0.6.x worker does.
    fn released(label: &str, queue_storage: bool) -> Self {
        Self::migrated_by(
            &awa_cli().expect("the released awa CLI"),
            label,
            queue_storage,
        )
    }

    /// A fresh, empty database.
    fn empty(label: &str) -> Self {
        let admin = dsn();
        let name = format!("awa_compat_{label}_{}", suffix());
        sql(&admin, &format!("CREATE DATABASE {name}"));
        Self {
            url: with_db(&admin, &name),
            admin,
            name,
        }
    }

    /// A fresh database migrated by the released CLI `cli`.
    fn migrated_by(cli: &std::path::Path, label: &str, queue_storage: bool) -> Self {
        let db = Self::empty(label);
        let out = Command::new(cli)
            .arg("migrate")
            .env("DATABASE_URL", &db.url)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "awa migrate: {}", text(&out.stderr));
        if queue_storage {
            assert_eq!(
                scalar(&db.url, "SELECT awa.storage_auto_finalize_if_fresh('awa')"),
                "t"
            );
        }
        db
    }

    /// A copy of `template` (which must have no open session).
    fn copy(template: &Self, label: &str) -> Self {
        let name = format!("awa_compat_{label}_{}", suffix());
        sql(
            &template.admin,
            &format!("CREATE DATABASE {name} TEMPLATE {}", template.name),
        );
        Self {
            url: with_db(&template.admin, &name),
            admin: template.admin.clone(),
            name,
        }
    }

    fn run(&self, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.json");
        let report_arg = report.to_str().unwrap().to_owned();
        let mut args = vec!["--dsn", &self.url, "--report-json", &report_arg];
        args.extend_from_slice(extra);
        let out = run(&args, &[], 600);
        let json = std::fs::read_to_string(&report)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| panic!("no report; stderr: {}", text(&out.stderr)));
        (out, json)
    }

    /// Row counts of every table of the awa schema (partitioned parents, their partitions and
    /// queue storage's own tables), plus the run-scoped roles of the cluster.
    fn snapshot(&self) -> Vec<(String, String)> {
        let tables = sql(
            &self.url,
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = 'awa' AND c.relkind IN ('r', 'p') ORDER BY 1",
        );
        let names: Vec<&str> = tables.iter().filter_map(|r| r[0].as_deref()).collect();
        for t in [
            "jobs_hot",
            "scheduled_jobs",
            "job_unique_claims",
            "schema_version",
        ] {
            assert!(
                names.contains(&t),
                "expected released Awa's tables: {names:?}"
            );
        }
        let mut out: Vec<(String, String)> = tables
            .into_iter()
            .map(|r| {
                let t = r[0].clone().unwrap();
                let n = scalar(&self.url, &format!("SELECT count(*) FROM awa.\"{t}\""));
                (t, n)
            })
            .collect();
        out.push((
            "roles awa_conformance_%".to_owned(),
            scalar(
                &self.url,
                "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'awa\\_conformance\\_%'",
            ),
        ));
        out
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        if let Ok(rt) = rt {
            let (admin, name) = (self.admin.clone(), self.name.clone());
            rt.block_on(async move {
                if let Ok((client, conn)) =
                    tokio_postgres::connect(&admin, tokio_postgres::NoTls).await
                {
                    tokio::spawn(conn);
                    let _ = client
                        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .await;
                }
            });
        }
    }
}

fn compat_names(report: &serde_json::Value, status: &str) -> Vec<String> {
    cases_with(report, status)
        .into_iter()
        .filter(|n| n.starts_with("sql::compat::"))
        .collect()
}

fn released_awa_passes_the_compat_profile_and_is_left_as_found() {
    let db = Db::released("green", true);
    // Jobs of someone else, committed before the run: a keyed, claimed, sharded job and a
    // scheduled one. The run must neither collide with them nor remove them.
    sql(
        &db.url,
        "INSERT INTO awa.queue_meta (queue, enqueue_shards) VALUES ('pre_existing', 8); \
         SELECT awa.insert_job_compat('pre', 'pre_existing', p_unique_key => '\\x01'::bytea, \
                p_unique_states => B'11111111', p_ordering_key => 'k'::bytea); \
         SELECT awa.insert_job_compat('pre', 'pre_existing', p_state => 'scheduled', \
                p_run_at => now() + interval '1 day');",
    );
    let jobs = scalar(&db.url, "SELECT count(*) FROM awa.jobs");
    let before = db.snapshot();
    let (out, report) = db.run(&[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let passed = compat_names(&report, "passed");
    assert!(
        passed.len() >= 200,
        "only {} compat cases passed",
        passed.len()
    );
    for family in [
        "ordering::w1",
        "ordering::w64",
        "unique::",
        "claims::",
        "validation::",
        "partitioned::",
    ] {
        assert!(
            passed
                .iter()
                .any(|n| n.starts_with(&format!("sql::compat::{family}"))),
            "no passed sql::compat::{family} case"
        );
    }
    for status in ["failed", "errored", "ignored", "not_applicable"] {
        let bad = compat_names(&report, status);
        assert!(bad.is_empty(), "{status} compat cases: {bad:?}");
    }
    // The contract's cases do not apply, each with the reason; concurrency ones say why.
    let na = cases_with(&report, "not_applicable");
    assert!(
        na.iter().any(|n| n.starts_with("sql::function::cd-")),
        "{na:?}"
    );
    let reason = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["name"]
                .as_str()
                .unwrap()
                .starts_with("sql::function::cd-")
        })
        .and_then(|c| c["message"].as_str())
        .unwrap()
        .to_owned();
    assert!(reason.contains("no concurrency key"), "{reason}");
    assert!(
        cases_with(&report, "passed")
            .iter()
            .all(|n| !n.starts_with("sql::") || n.starts_with("sql::compat::")),
        "a contract case passed on released Awa"
    );
    // Released Awa is judged on the compat cases by the one features rule: what 0.6.x does
    // is checked whole, and ADR-033's concurrency key, which it lacks, is named as not
    // checked (the contract's own cases are no part of its catalogue).
    assert_eq!(
        report["database_features"]["checked"],
        "ordering-key, uniqueness, partitions, refusals; concurrency-key not checked (no \
         case), precedence not checked (no case), catalog not checked (no case)"
    );
    assert_eq!(report["database_features"]["core"], false);
    let prov = &report["provenance"];
    assert_eq!(prov["level"], "compat");
    assert_eq!(
        prov["contract_version"],
        "none (released Awa 0.6.x, schema version 40)"
    );
    assert_eq!(
        prov["extra"]["released_awa"],
        "released Awa 0.6.x, schema version 40, insert_job_compat, storage engine queue_storage",
        "{prov}"
    );
    assert_eq!(before, db.snapshot(), "the run changed row counts");
    assert_eq!(jobs, scalar(&db.url, "SELECT count(*) FROM awa.jobs"));
}

/// On the canonical engine 0.6.x keeps unique keys and claims (in jobs_hot and scheduled_jobs,
/// as 0.5.x does) but no enqueue shard: validation, unique and claims run; ordering and
/// partitions say how to activate queue storage.
fn canonical_engine_runs_what_it_keeps_and_says_why_the_rest_does_not_apply() {
    let db = Db::released("canonical", false);
    let before = db.snapshot();
    let (out, report) = db.run(&["sql::compat::"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let passed = compat_names(&report, "passed");
    for family in ["validation::", "unique::", "claims::"] {
        assert!(
            passed
                .iter()
                .any(|n| n.starts_with(&format!("sql::compat::{family}"))),
            "no passed sql::compat::{family} case on the canonical engine"
        );
    }
    assert!(passed
        .iter()
        .all(|n| !n.starts_with("sql::compat::ordering::")
            && !n.starts_with("sql::compat::partitioned::")));
    let na = compat_names(&report, "not_applicable");
    assert!(na.iter().any(|n| n.starts_with("sql::compat::ordering::")));
    assert!(na
        .iter()
        .any(|n| n.starts_with("sql::compat::partitioned::")));
    assert!(
        messages(&report, "not_applicable")
            .iter()
            .all(|(n, m)| !n.starts_with("sql::compat::")
                || m.contains("storage_auto_finalize_if_fresh")),
        "every compat case not applicable on the canonical engine says how to activate queue \
         storage"
    );
    assert!(report["provenance"]["extra"]["released_awa"]
        .as_str()
        .unwrap()
        .ends_with("storage engine canonical"));
    assert_eq!(before, db.snapshot());
}

/// Released Awa as most installations run it: a login role without CREATEROLE that owns the
/// database and migrated it. The compat profile needs no role of its own, so preflight must
/// not ask for CREATEROLE.
fn released_awa_owned_by_an_app_role_needs_no_createrole() {
    let admin = dsn();
    let role = format!("awa_compat_app_{}", suffix());
    let name = format!("awa_compat_app_{}", suffix());
    sql(&admin, &format!("CREATE ROLE {role} LOGIN NOCREATEROLE"));
    sql(&admin, &format!("CREATE DATABASE {name} OWNER {role}"));
    let (scheme, rest) = admin.split_once("://").unwrap();
    let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    let url = with_db(&format!("{scheme}://{role}@{host}"), &name);
    let db = Db {
        admin: admin.clone(),
        name,
        url: url.clone(),
    };
    let cli = awa_cli().expect("the released awa CLI");
    let out = Command::new(cli)
        .arg("migrate")
        .env("DATABASE_URL", &url)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "awa migrate: {}", text(&out.stderr));
    assert_eq!(
        scalar(&url, "SELECT awa.storage_auto_finalize_if_fresh('awa')"),
        "t"
    );
    let (out, report) = db.run(&["sql::compat::validation::"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!compat_names(&report, "passed").is_empty());
    drop(db);
    sql(&admin, &format!("DROP ROLE IF EXISTS {role}"));
}

/// `schema status` on a database `awa migrate` made says in a few lines that it holds released
/// Awa (its schema version, the compat profile, how to run it) and exits 7; before, it printed
/// about 1,400 lines and exited 0. `--all` still lists every object.
fn schema_status_recognises_released_awa_in_a_few_lines() {
    let db = Db::released("status", true);
    let before = db.snapshot();
    let status = |all: bool| {
        let mut args = vec!["schema", "status", "--dsn", &db.url];
        if all {
            args.push("--all");
        }
        run(&args, &[], 120)
    };
    let out = status(false);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let version = scalar(&db.url, "SELECT max(version) FROM awa.schema_version");
    assert!(
        stdout.starts_with(&format!(
            "released-awa: schema \"awa\" holds released Awa 0.6.x, schema version {version}, \
             insert_job_compat, storage engine queue_storage; it is not the contract reference\n"
        )),
        "{stdout}"
    );
    assert!(stdout.contains("compat profile"), "{stdout}");
    assert!(
        stdout.contains("awa-conformance --dsn URL --schema \"awa\""),
        "{stdout}"
    );
    assert!(stdout.lines().count() <= 5, "{stdout}");
    assert!(
        stdout.contains("schema status --all lists every one"),
        "{stdout}"
    );
    let out = status(true);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    let all = text(&out.stdout);
    assert!(all.lines().count() > 1000, "{}", all.lines().count());
    assert!(
        all.contains("  not in the reference (left alone): table awa.jobs_hot"),
        "{}",
        all.lines().take(40).collect::<Vec<_>>().join("\n")
    );
    assert_eq!(before, db.snapshot());
}

/// A mutant of released `insert_job_compat`: text replacements on its definition.
struct Mutant {
    name: &'static str,
    edits: &'static [(&'static str, &'static str)],
    /// The families (filters) it is run on.
    filters: &'static [&'static str],
}

const KIND_CHECK: &str = "    IF length(p_kind) > 200 THEN
        RAISE EXCEPTION 'job kind length must be <= 200 characters'
            USING ERRCODE = '23514';
    END IF;
";
const QUEUE_CHECK: &str = "    IF length(v_queue) > 200 THEN
        RAISE EXCEPTION 'queue name length must be <= 200 characters'
            USING ERRCODE = '23514';
    END IF;
";
const PRIORITY_CHECK: &str = "    IF v_priority < 1 OR v_priority > 4 THEN
        RAISE EXCEPTION 'priority must be between 1 and 4'
            USING ERRCODE = '23514';
    END IF;
";
const ATTEMPTS_CHECK: &str = "    IF v_max_attempts < 1 OR v_max_attempts > 1000 THEN
        RAISE EXCEPTION 'max_attempts must be between 1 and 1000'
            USING ERRCODE = '23514';
    END IF;
";
const TAGS_CHECK: &str = "    IF cardinality(v_tags) > 20 THEN
        RAISE EXCEPTION 'job tags must contain at most 20 values'
            USING ERRCODE = '23514';
    END IF;
";
const HASH_STEP: &str = "(v_hash * 1099511628211) + get_byte(p_ordering_key, v_i)";
const CLAIM_RULE: &str = "AND awa.job_state_in_bitmask(p_unique_states, v_state)";

const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "fnv_add_then_multiply",
        edits: &[(HASH_STEP, "(v_hash + get_byte(p_ordering_key, v_i)) * 1099511628211")],
        filters: &["sql::compat::ordering::"],
    },
    Mutant {
        name: "shard_out_of_width",
        edits: &[(
            "v_enqueue_shard := MOD(v_hash, v_enqueue_shards)::smallint;",
            "v_enqueue_shard := MOD(v_hash, v_enqueue_shards + 1)::smallint;",
        )],
        filters: &["sql::compat::ordering::"],
    },
    Mutant {
        name: "width_ignored",
        edits: &[(
            "v_enqueue_shards := COALESCE(v_enqueue_shards, 1);",
            "v_enqueue_shards := 1;",
        )],
        filters: &["sql::compat::ordering::w2"],
    },
    Mutant {
        name: "physical_queue_renamed",
        edits: &[(
            "v_queue TEXT := COALESCE(p_queue, 'default');",
            "v_queue TEXT := replace(COALESCE(p_queue, 'default'), '_p', '_q');",
        )],
        filters: &["sql::compat::partitioned::"],
    },
    Mutant {
        name: "unique_key_truncated",
        edits: &[(
            "BEGIN\n    IF length(p_kind)",
            "BEGIN\n    p_unique_key := substring(p_unique_key from 1 for 15);\n    IF length(p_kind)",
        )],
        filters: &["sql::compat::unique::"],
    },
    Mutant {
        name: "claim_whatever_the_mask",
        edits: &[(CLAIM_RULE, "")],
        filters: &["sql::compat::claims::"],
    },
    Mutant {
        name: "claim_never",
        edits: &[(CLAIM_RULE, "AND false")],
        filters: &["sql::compat::claims::"],
    },
    Mutant {
        name: "unique_states_stored_reversed",
        edits: &[(
            "ELSE p_unique_states::TEXT",
            "ELSE reverse(p_unique_states::TEXT)",
        )],
        filters: &["sql::compat::claims::"],
    },
    Mutant {
        name: "validation_order_reversed",
        edits: &[
            (KIND_CHECK, "@1@"),
            (QUEUE_CHECK, "@2@"),
            (PRIORITY_CHECK, "@3@"),
            (ATTEMPTS_CHECK, "@4@"),
            (TAGS_CHECK, "@5@"),
            ("@1@", TAGS_CHECK),
            ("@2@", ATTEMPTS_CHECK),
            ("@3@", PRIORITY_CHECK),
            ("@4@", QUEUE_CHECK),
            ("@5@", KIND_CHECK),
        ],
        filters: &["sql::compat::validation::"],
    },
    Mutant {
        name: "bounds_off_by_one",
        edits: &[
            ("length(p_kind) > 200", "octet_length(p_kind) > 200"),
            ("v_priority < 1 OR v_priority > 4", "v_priority < 2 OR v_priority > 3"),
            (
                "v_max_attempts < 1 OR v_max_attempts > 1000",
                "v_max_attempts < 1 OR v_max_attempts > 999",
            ),
            ("cardinality(v_tags) > 20", "cardinality(v_tags) > 19"),
        ],
        filters: &["sql::compat::validation::"],
    },
    Mutant {
        name: "bounds_too_wide",
        edits: &[
            ("length(p_kind) > 200", "length(p_kind) > 201"),
            ("length(v_queue) > 200", "length(v_queue) > 250"),
            ("v_priority < 1 OR v_priority > 4", "v_priority < 0 OR v_priority > 5"),
            (
                "v_max_attempts < 1 OR v_max_attempts > 1000",
                "v_max_attempts < 0 OR v_max_attempts > 1001",
            ),
            ("cardinality(v_tags) > 20", "cardinality(v_tags) > 21"),
            ("'job tags must contain at most 20 values'", "'too many tags'"),
        ],
        filters: &["sql::compat::validation::"],
    },
    Mutant {
        name: "empty_kind_refused",
        edits: &[(
            "BEGIN\n    IF length(p_kind)",
            "BEGIN\n    IF p_kind = '' THEN RAISE EXCEPTION 'empty kind' USING ERRCODE = '23514'; END IF;\n    IF length(p_kind)",
        )],
        filters: &["sql::compat::validation::empty"],
    },
];

/// Apply a mutant's edits to the released definition; every edit must match.
fn mutate(def: &str, m: &Mutant) -> String {
    m.edits.iter().fold(def.to_owned(), |acc, (from, to)| {
        assert!(
            acc.contains(from),
            "mutant {}: {from:?} not in the definition",
            m.name
        );
        acc.replacen(from, to, 1)
    })
}

fn every_compat_case_fails_on_some_mutant() {
    let template = Db::released("tmpl", true);
    let def = scalar(
        &template.url,
        "SELECT pg_get_functiondef('awa.insert_job_compat'::regproc)",
    );
    // The clean profile, for the list of cases that must each be killed.
    let clean = Db::copy(&template, "clean");
    let (out, report) = clean.run(&["sql::compat::"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let all: BTreeSet<String> = compat_names(&report, "passed").into_iter().collect();
    drop(clean);
    let mut killed = BTreeSet::new();
    for m in MUTANTS {
        let db = Db::copy(&template, m.name);
        sql(&db.url, &mutate(&def, m));
        killed.extend(killed_by(&db, m.name, m.filters));
    }
    let survivors: Vec<&String> = all.difference(&killed).collect();
    assert!(
        survivors.is_empty(),
        "{} compat cases fail on no mutant: {survivors:?}",
        survivors.len()
    );
}

/// Run each of a mutant's `filters` on `db`: each must fail (exit 1) with failed compat cases;
/// returns them.
fn killed_by(db: &Db, mutant: &str, filters: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for filter in filters {
        let (run, report) = db.run(&[filter]);
        let failed = compat_names(&report, "failed");
        assert_eq!(
            run.status.code(),
            Some(1),
            "mutant {mutant} survived {filter}: {}",
            text(&run.stderr)
        );
        assert!(!failed.is_empty(), "mutant {mutant}: nothing failed");
        out.extend(failed);
    }
    out
}

/// The oldest release the compat profile checks (tests/requirements-awa-oldest.txt): a fresh
/// database migrated by that awa-cli.
fn oldest(label: &str) -> Db {
    Db::migrated_by(
        &awa_cli_oldest().expect("the oldest released awa CLI"),
        label,
        false,
    )
}

/// Released Awa 0.5.x (schema version 10 or 11: insert_job_compat without p_ordering_key, the
/// canonical engine only, validation by CHECK constraints) is recognised and named by its
/// series; unique keys, claims and the validation bounds run and pass; ordering, partitions and
/// the validation order are not applicable, each naming the version; someone else's jobs are
/// left alone and the database as found; `schema status` names it too.
fn oldest_released_awa_runs_what_its_schema_version_expresses() {
    let db = oldest("oldest");
    let version = scalar(&db.url, "SELECT max(version) FROM awa.schema_version");
    let v: i32 = version.parse().unwrap();
    assert!(
        (10..12).contains(&v),
        "the oldest release checked must be 0.5.x (schema version 10 or 11), got {v}"
    );
    let name = format!("released Awa 0.5.x, schema version {v}");
    // Someone else's jobs, committed before the run: a claimed one and a scheduled one.
    sql(
        &db.url,
        "SELECT awa.insert_job_compat('pre', 'pre_existing', p_unique_key => '\\x01'::bytea, \
                p_unique_states => B'11111111'); \
         SELECT awa.insert_job_compat('pre', 'pre_existing', p_state => 'scheduled', \
                p_run_at => now() + interval '1 day');",
    );
    let before = db.snapshot();
    let (out, report) = db.run(&[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(
        stderr.contains(&format!("contract none ({name}) ·")),
        "the console header names the series: {stderr}"
    );
    let prov = &report["provenance"];
    assert_eq!(prov["level"], "compat");
    assert_eq!(prov["contract_version"], format!("none ({name})"));
    assert_eq!(
        prov["extra"]["released_awa"],
        format!("{name}, insert_job_compat without p_ordering_key, storage engine canonical")
    );
    let passed = compat_names(&report, "passed");
    for family in ["unique::", "claims::", "validation::"] {
        assert!(
            passed
                .iter()
                .any(|n| n.starts_with(&format!("sql::compat::{family}"))),
            "no passed sql::compat::{family} case on {name}"
        );
    }
    assert!(
        passed.len() >= 300,
        "only {} compat cases passed",
        passed.len()
    );
    for status in ["failed", "errored", "ignored"] {
        let bad = compat_names(&report, status);
        assert!(bad.is_empty(), "{status} compat cases: {bad:?}");
    }
    // What 0.5.x cannot express is not applicable, each case saying why and naming the version.
    let na: Vec<(String, String)> = messages(&report, "not_applicable")
        .into_iter()
        .filter(|(n, _)| n.starts_with("sql::compat::"))
        .collect();
    for (group, why) in [
        ("ordering::", "takes no p_ordering_key"),
        ("partitioned::", "takes no p_ordering_key"),
        ("validation::order_", "CHECK constraints"),
    ] {
        let of: Vec<&(String, String)> = na
            .iter()
            .filter(|(n, _)| n.starts_with(&format!("sql::compat::{group}")))
            .collect();
        assert!(
            !of.is_empty(),
            "no sql::compat::{group} case is not applicable"
        );
        for (n, m) in of {
            assert!(m.contains(&name) && m.contains(why), "{n}: {m}");
        }
    }
    assert!(
        na.iter().all(
            |(n, _)| ["ordering::", "partitioned::", "validation::order_"]
                .iter()
                .any(|g| n.starts_with(&format!("sql::compat::{g}")))
        ),
        "{na:?}"
    );
    // The contract's cases do not apply either, naming the version.
    let (_, why) = messages(&report, "not_applicable")
        .into_iter()
        .find(|(n, _)| n.starts_with("sql::function::cd-"))
        .unwrap();
    assert!(why.contains(&name), "{why}");
    assert_eq!(before, db.snapshot(), "the run changed row counts");

    let status = run(&["schema", "status", "--dsn", &db.url], &[], 120);
    assert_eq!(status.status.code(), Some(7), "{}", text(&status.stderr));
    let stdout = text(&status.stdout);
    assert!(
        stdout.starts_with(&format!(
            "released-awa: schema \"awa\" holds {name}, insert_job_compat without \
             p_ordering_key, storage engine canonical; it is not the contract reference\n  a run \
             checks it with the compat profile"
        )),
        "{stdout}"
    );
    assert!(stdout.contains("no queue storage"), "{stdout}");
}

/// A release older than insert_job_compat, as awa-cli 0.5.1–0.5.3 install it (schema version
/// 6): the oldest CLI's own migrations up to 6 (`awa migrate --sql --to 6`, the same schema but
/// for one backoff function's body), so no third awa-cli is installed. The run is refused with
/// exit 5 in one line that names the version found and the oldest checked, and never advises
/// installing the reference schema; `schema status` says the same.
fn released_awa_older_than_insert_job_compat_is_refused_in_one_line() {
    let cli = awa_cli_oldest().expect("the oldest released awa CLI");
    let out = Command::new(&cli)
        .args(["migrate", "--sql", "--to", "6"])
        .env_remove("DATABASE_URL")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "awa migrate --sql: {}",
        text(&out.stderr)
    );
    let db = Db::empty("too_old");
    sql(&db.url, &text(&out.stdout));
    assert_eq!(
        scalar(&db.url, "SELECT max(version) FROM awa.schema_version"),
        "6"
    );
    let before = db.snapshot();
    let out = run(&["--dsn", &db.url], &[], 120);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("awa-conformance: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    for part in [
        "released Awa 0.5.x, schema version 6 (installed by awa-cli 0.5.1–0.5.3)",
        "no insert_job_compat",
        "the oldest released Awa it checks is schema version 10 (awa-cli 0.5.5)",
        "awa migrate",
    ] {
        assert!(errors[0].contains(part), "{part:?} not in {stderr}");
    }
    assert!(!stderr.contains("schema install"), "{stderr}");
    let status = run(&["schema", "status", "--dsn", &db.url], &[], 120);
    assert_eq!(status.status.code(), Some(7), "{}", text(&status.stderr));
    let stdout = text(&status.stdout);
    assert!(
        stdout.starts_with(
            "released-awa: schema \"awa\" holds released Awa 0.5.x, schema version 6, no \
             insert_job_compat, storage engine canonical; it is not the contract reference\n  a \
             run refuses it (exit 5)"
        ),
        "{stdout}"
    );
    assert_eq!(before, db.snapshot());
}

/// A mutant of the oldest release: SQL run on a copy of its database (functions replaced with
/// edited definitions, CHECK constraints changed).
struct OldMutant {
    name: &'static str,
    /// (function, edits of its definition).
    functions: &'static [(&'static str, &'static [(&'static str, &'static str)])],
    /// Statements run after the functions are replaced.
    statements: &'static str,
    /// The families (filters) it is run on.
    filters: &'static [&'static str],
}

const OLD_CLAIM_RULE: &str =
    "\n            AND awa.job_state_in_bitmask(NEW.unique_states, NEW.state);";
const OLD_STORED_KEYS: &str = "        p_unique_key,\n        p_unique_states\n    )";

const OLD_MUTANTS: &[OldMutant] = &[
    OldMutant {
        name: "old_unique_key_truncated",
        functions: &[(
            "awa.insert_job_compat",
            &[(
                OLD_STORED_KEYS,
                "        substring(p_unique_key from 1 for 15),\n        p_unique_states\n    )",
            )],
        )],
        statements: "",
        filters: &["sql::compat::unique::"],
    },
    OldMutant {
        name: "old_unique_states_stored_reversed",
        functions: &[(
            "awa.insert_job_compat",
            &[(
                OLD_STORED_KEYS,
                "        p_unique_key,\n        reverse(p_unique_states::text)::bit(8)\n    )",
            )],
        )],
        statements: "",
        filters: &["sql::compat::claims::"],
    },
    OldMutant {
        name: "old_claim_whatever_the_mask",
        functions: &[("awa.sync_job_unique_claims", &[(OLD_CLAIM_RULE, ";")])],
        statements: "",
        filters: &["sql::compat::claims::"],
    },
    OldMutant {
        name: "old_claim_never",
        functions: &[(
            "awa.sync_job_unique_claims",
            &[(OLD_CLAIM_RULE, "\n            AND false;")],
        )],
        statements: "",
        filters: &["sql::compat::claims::"],
    },
    OldMutant {
        name: "old_checks_off_by_one",
        functions: &[],
        statements: "ALTER TABLE awa.scheduled_jobs \
            DROP CONSTRAINT scheduled_jobs_kind_length, \
            ADD CONSTRAINT scheduled_jobs_kind_length CHECK (octet_length(kind) <= 200), \
            DROP CONSTRAINT scheduled_jobs_priority_in_range, \
            ADD CONSTRAINT scheduled_jobs_priority_in_range CHECK (priority BETWEEN 2 AND 3), \
            DROP CONSTRAINT scheduled_jobs_max_attempts_range, \
            ADD CONSTRAINT scheduled_jobs_max_attempts_range \
                CHECK (max_attempts BETWEEN 1 AND 999), \
            DROP CONSTRAINT scheduled_jobs_tags_count, \
            ADD CONSTRAINT scheduled_jobs_tags_count CHECK (cardinality(tags) <= 19)",
        filters: &["sql::compat::validation::"],
    },
    OldMutant {
        name: "old_checks_too_wide",
        functions: &[],
        statements: "ALTER TABLE awa.scheduled_jobs \
            DROP CONSTRAINT scheduled_jobs_kind_length, \
            ADD CONSTRAINT scheduled_jobs_kind_length CHECK (length(kind) <= 201), \
            DROP CONSTRAINT scheduled_jobs_queue_name_length, \
            ADD CONSTRAINT scheduled_jobs_queue_name_length CHECK (length(queue) <= 250), \
            DROP CONSTRAINT scheduled_jobs_priority_in_range, \
            ADD CONSTRAINT scheduled_jobs_priority_in_range CHECK (priority BETWEEN 0 AND 5), \
            DROP CONSTRAINT scheduled_jobs_max_attempts_range, \
            ADD CONSTRAINT scheduled_jobs_max_attempts_range \
                CHECK (max_attempts BETWEEN 0 AND 1001), \
            DROP CONSTRAINT scheduled_jobs_tags_count, \
            ADD CONSTRAINT scheduled_jobs_tags_count CHECK (cardinality(tags) <= 21)",
        filters: &["sql::compat::validation::"],
    },
    // The refusal must come from the constraint of the check: another one refusing the same
    // value is not the release's validation.
    OldMutant {
        name: "old_check_renamed",
        functions: &[],
        statements: "ALTER TABLE awa.scheduled_jobs RENAME CONSTRAINT \
            scheduled_jobs_queue_name_length TO scheduled_jobs_queue_length",
        filters: &["sql::compat::validation::queue_201_chars"],
    },
    OldMutant {
        name: "old_empty_kind_refused",
        functions: &[],
        statements: "ALTER TABLE awa.scheduled_jobs \
            ADD CONSTRAINT scheduled_jobs_kind_not_empty CHECK (kind <> '')",
        filters: &["sql::compat::validation::empty"],
    },
];

/// Every compat case that passes on the oldest release fails on some mutant of it: the canonical
/// read-back of unique keys and states, the claim rule and the CHECK-constraint validation are
/// each shown to catch a wrong implementation.
fn every_compat_case_of_the_oldest_release_fails_on_some_mutant() {
    let template = oldest("old_tmpl");
    let clean = Db::copy(&template, "old_clean");
    let (out, report) = clean.run(&["sql::compat::"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let all: BTreeSet<String> = compat_names(&report, "passed").into_iter().collect();
    assert!(!all.is_empty());
    drop(clean);
    let mut killed = BTreeSet::new();
    for m in OLD_MUTANTS {
        let db = Db::copy(&template, m.name);
        for (function, edits) in m.functions {
            let def = scalar(
                &db.url,
                &format!("SELECT pg_get_functiondef('{function}'::regproc)"),
            );
            let mutated = edits.iter().fold(def, |acc, (from, to)| {
                assert!(
                    acc.contains(from),
                    "mutant {}: {from:?} not in {function}",
                    m.name
                );
                acc.replacen(from, to, 1)
            });
            sql(&db.url, &mutated);
        }
        if !m.statements.is_empty() {
            sql(&db.url, m.statements);
        }
        killed.extend(killed_by(&db, m.name, m.filters));
    }
    let survivors: Vec<&String> = all.difference(&killed).collect();
    assert!(
        survivors.is_empty(),
        "{} compat cases fail on no mutant of the oldest release: {survivors:?}",
        survivors.len()
    );
}

fn main() {
    let cli = awa_cli().is_some();
    let gate = || {
        Gate::When(
            cli && std::env::var("DATABASE_URL").is_ok_and(|d| !d.trim().is_empty()),
            "DATABASE_URL and the released awa CLI (pip install -r tests/requirements.txt)",
        )
    };
    let oldest = awa_cli_oldest().is_some();
    let gate_oldest = || {
        Gate::When(
            oldest && std::env::var("DATABASE_URL").is_ok_and(|d| !d.trim().is_empty()),
            "DATABASE_URL and the oldest released awa CLI (scripts/install-deps.sh installs the \
             pin of tests/requirements-awa-oldest.txt into target/awa-cli-<version>; or set \
             AWA_CLI_OLDEST)",
        )
    };
    main_with(vec![
        (
            "oldest_released_awa_runs_what_its_schema_version_expresses",
            gate_oldest(),
            oldest_released_awa_runs_what_its_schema_version_expresses,
        ),
        (
            "released_awa_older_than_insert_job_compat_is_refused_in_one_line",
            gate_oldest(),
            released_awa_older_than_insert_job_compat_is_refused_in_one_line,
        ),
        (
            "every_compat_case_of_the_oldest_release_fails_on_some_mutant",
            gate_oldest(),
            every_compat_case_of_the_oldest_release_fails_on_some_mutant,
        ),
        (
            "released_awa_passes_the_compat_profile_and_is_left_as_found",
            gate(),
            released_awa_passes_the_compat_profile_and_is_left_as_found,
        ),
        (
            "canonical_engine_runs_what_it_keeps_and_says_why_the_rest_does_not_apply",
            gate(),
            canonical_engine_runs_what_it_keeps_and_says_why_the_rest_does_not_apply,
        ),
        (
            "released_awa_owned_by_an_app_role_needs_no_createrole",
            gate(),
            released_awa_owned_by_an_app_role_needs_no_createrole,
        ),
        (
            "schema_status_recognises_released_awa_in_a_few_lines",
            gate(),
            schema_status_recognises_released_awa_in_a_few_lines,
        ),
        (
            "every_compat_case_fails_on_some_mutant",
            gate(),
            every_compat_case_fails_on_some_mutant,
        ),
    ]);
}
