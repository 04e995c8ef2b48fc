//! The compat profile against real released Awa: a database migrated by the released CLI
//! (`awa migrate`, awa-cli 0.6.9 from tests/requirements.txt) is recognised, checked, and left
//! exactly as found; and every compat case fails on some mutant of `insert_job_compat`.

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

mod db_support;

use std::collections::BTreeSet;
use std::process::Command;

use db_support::{
    awa_cli, cases_with, dsn, main_with, run, scalar, sql, suffix, text, with_db, Gate,
};

/// A database of the cluster, dropped on drop.
struct Db {
    admin: String,
    name: String,
    url: String,
}

impl Db {
    /// A fresh database migrated by the released CLI; `queue_storage` promotes it as a fresh
    /// 0.6.x worker does.
    fn released(label: &str, queue_storage: bool) -> Self {
        let admin = dsn();
        let name = format!("awa_compat_{label}_{}", suffix());
        sql(&admin, &format!("CREATE DATABASE {name}"));
        let db = Self {
            url: with_db(&admin, &name),
            admin,
            name,
        };
        let cli = awa_cli().expect("the released awa CLI");
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
        assert!(
            tables.len() > 40,
            "expected released Awa's tables: {tables:?}"
        );
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
    let prov = &report["provenance"];
    assert_eq!(prov["level"], "compat");
    assert_eq!(
        prov["contract_version"],
        "none (released Awa, schema version 40)"
    );
    assert!(
        prov["extra"]["released_awa"]
            .as_str()
            .unwrap()
            .contains("schema version 40, insert_job_compat, storage engine queue_storage"),
        "{prov}"
    );
    assert_eq!(before, db.snapshot(), "the run changed row counts");
    assert_eq!(jobs, scalar(&db.url, "SELECT count(*) FROM awa.jobs"));
}

fn canonical_engine_runs_validation_and_says_why_the_rest_does_not_apply() {
    let db = Db::released("canonical", false);
    let before = db.snapshot();
    let (out, report) = db.run(&["sql::compat::"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(compat_names(&report, "passed")
        .iter()
        .all(|n| n.starts_with("sql::compat::validation::")));
    assert!(!compat_names(&report, "passed").is_empty());
    let na = compat_names(&report, "not_applicable");
    assert!(na.iter().any(|n| n.starts_with("sql::compat::ordering::")));
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
            "released-awa: schema \"awa\" holds released Awa, schema version {version}, \
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
        for filter in m.filters {
            let (out, report) = db.run(&[filter]);
            let failed = compat_names(&report, "failed");
            assert_eq!(
                out.status.code(),
                Some(1),
                "mutant {} survived {filter}: {}",
                m.name,
                text(&out.stderr)
            );
            assert!(!failed.is_empty(), "mutant {}: nothing failed", m.name);
            killed.extend(failed);
        }
    }
    let survivors: Vec<&String> = all.difference(&killed).collect();
    assert!(
        survivors.is_empty(),
        "{} compat cases fail on no mutant: {survivors:?}",
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
    main_with(vec![
        (
            "released_awa_passes_the_compat_profile_and_is_left_as_found",
            gate(),
            released_awa_passes_the_compat_profile_and_is_left_as_found,
        ),
        (
            "canonical_engine_runs_validation_and_says_why_the_rest_does_not_apply",
            gate(),
            canonical_engine_runs_validation_and_says_why_the_rest_does_not_apply,
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
