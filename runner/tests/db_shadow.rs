//! Hostile database: shadow functions and operators planted where a default search path would
//! find them are never executed by any session of the kit (ADR 0048, CVE-2018-1058's class).
//!
//! A fresh database gets a non-superuser "planter" role that can create in `public` (as every
//! role could up to PostgreSQL 14) and owns a schema named after the runner's login. For every
//! catalog function and operator the kit's SQL names (runner/sql, the runner's and the
//! bindings' SQL literals, the reference schema), the planter creates shadows in both schemas:
//! one with the catalog signature and one taking `text` everywhere (the better match for an
//! unknown-typed literal). Each shadow counts its calls in a sequence of its own, which a
//! rollback or a read-only transaction cannot hide. Two controls show the shadows are live:
//! the pre-fix procs.sql, sent from a session with the default search path, runs the planted
//! `format_type(oid, text)`; an explicit `public`-first path runs a planted operator. Then every
//! database subcommand of the kit runs against that database (schema install, status, the full
//! `--dsn` run, a producer run, fuzz, uninstall) and no shadow may have been called.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test helpers"
)]

mod sql_scan;
mod support;

use std::collections::BTreeSet;

use support::{awa_cli, dsn, main_with, run, scalar, sql, suffix, text, with_db, Gate};

/// A database of the cluster with the shadows planted; dropped (with the planter) on drop.
struct Shadowed {
    admin: String,
    name: String,
    planter: String,
    url: String,
}

/// Every function name and operator the kit's SQL uses.
fn names_used() -> (BTreeSet<String>, BTreeSet<String>) {
    let mut sources = sql_scan::runner_sql_files();
    sources.extend(sql_scan::rust_sql_literals());
    sources.extend(sql_scan::schema_sql_files());
    let mut functions = BTreeSet::new();
    let mut operators = BTreeSet::new();
    for s in &sources {
        for c in sql_scan::calls(&s.sql) {
            if !c.qualified || c.schema.as_deref() == Some("pg_catalog") {
                functions.insert(c.name);
            }
        }
        operators.extend(sql_scan::operators(&s.sql));
    }
    // Written as keywords, run as operators and functions.
    for op in ["~~", "!~~", "~~*", "!~~*"] {
        operators.insert(op.to_owned());
    }
    (functions, operators)
}

/// Plant the shadows (as the planter) for every pg_catalog overload of the names given; the
/// map table `public.awa_shadow_map` names each shadow's counting sequence.
const PLANT: &str = r#"
CREATE TABLE public.awa_shadow_map (seq text PRIMARY KEY, shadow text NOT NULL);
CREATE SEQUENCE public.awa_shadow_released;
-- A call made under a search path that names the schema awa is released Awa's own (its
-- functions set `pg_catalog, awa, public`, advisory A9), not one of the kit's sessions, whose
-- path is pg_catalog, pg_temp (or, unpinned, "$user", public).
CREATE FUNCTION public.awa_shadow_count(seq text) RETURNS void LANGUAGE plpgsql AS $count$
BEGIN
    IF pg_catalog.current_setting('search_path') OPERATOR(pg_catalog.~) '(^|[ ,])awa([ ,]|$)' THEN
        PERFORM pg_catalog.nextval('public.awa_shadow_released');
    ELSE
        PERFORM pg_catalog.nextval(seq);
    END IF;
END
$count$;
DO $plant$
DECLARE
    p record; o record; sch text; variant int; n int := 0; args text; ret text; body text;
    fn text; seq text; l text; r text;
BEGIN
    FOREACH sch IN ARRAY ARRAY['public', session_user::text] LOOP
        FOR p IN SELECT pr.oid, pr.proname, pr.prokind, pr.pronargs, pr.proargtypes::oid[] AS types,
                        pr.prorettype, pr.proretset
                 FROM pg_catalog.pg_proc pr LEFT JOIN pg_catalog.pg_aggregate ag ON ag.aggfnoid = pr.oid
                 WHERE pr.pronamespace = 'pg_catalog'::regnamespace AND pr.proname = ANY (@FUNCTIONS@)
                   AND (pr.prokind = 'f' OR (pr.prokind = 'a' AND ag.aggkind = 'n')) LOOP
            -- Variant 0: the catalog signature; variant k: argument k as text; variant
            -- pronargs + 1: every argument as text.
            FOR variant IN 0..p.pronargs + 1 LOOP
                IF variant = p.pronargs + 1 AND p.pronargs < 2 THEN CONTINUE; END IF;
                n := n + 1;
                seq := pg_catalog.format('public.awa_shadow_hit_%s', n);
                EXECUTE pg_catalog.format('CREATE SEQUENCE %s', seq);
                SELECT pg_catalog.string_agg(CASE WHEN variant = 0 OR (variant <> i AND variant <= p.pronargs)
                                                  THEN pg_catalog.format_type(t, NULL) ELSE 'text' END,
                                             ', ' ORDER BY i)
                  INTO args FROM pg_catalog.unnest(p.types) WITH ORDINALITY AS u(t, i);
                args := coalesce(args, '');
                ret := pg_catalog.format_type(p.prorettype, NULL);
                IF variant > 0 AND ret LIKE 'any%' THEN ret := 'text'; END IF;
                BEGIN
                    IF p.prokind = 'a' THEN
                        -- An aggregate: its state function counts each row it sees.
                        fn := pg_catalog.format('%I.awa_shadow_sfunc_%s', sch, n);
                        EXECUTE pg_catalog.format(
                            'CREATE FUNCTION %s(s %s%s) RETURNS %s LANGUAGE plpgsql AS %L',
                            fn, CASE WHEN ret LIKE 'any%' THEN 'anycompatiblearray' ELSE ret END,
                            CASE WHEN args = '' THEN '' ELSE ', ' || args END,
                            CASE WHEN ret LIKE 'any%' THEN 'anycompatiblearray' ELSE ret END,
                            pg_catalog.format('BEGIN PERFORM public.awa_shadow_count(%L); RETURN s; END', seq));
                        EXECUTE pg_catalog.format('CREATE AGGREGATE %I.%I(%s) (SFUNC = %s, STYPE = %s)',
                            sch, p.proname, CASE WHEN args = '' THEN '*' ELSE args END, fn,
                            CASE WHEN ret LIKE 'any%' THEN 'anycompatiblearray' ELSE ret END);
                    ELSE
                        body := pg_catalog.format('BEGIN PERFORM public.awa_shadow_count(%L); RETURN%s; END', seq,
                                                  CASE WHEN p.proretset THEN '' ELSE ' NULL' END);
                        EXECUTE pg_catalog.format('CREATE FUNCTION %I.%I(%s) RETURNS %s%s LANGUAGE plpgsql AS %L',
                            sch, p.proname, args, CASE WHEN p.proretset THEN 'SETOF ' ELSE '' END, ret, body);
                    END IF;
                    INSERT INTO public.awa_shadow_map VALUES (seq, pg_catalog.format('%I.%I(%s)', sch, p.proname, args));
                EXCEPTION WHEN OTHERS THEN
                    -- A signature PL/pgSQL cannot take (internal, "any", ...) or one planted already.
                    NULL;
                END;
            END LOOP;
        END LOOP;
        FOR o IN SELECT op.oprname, op.oprleft, op.oprright, op.oprresult
                 FROM pg_catalog.pg_operator op
                 WHERE op.oprnamespace = 'pg_catalog'::regnamespace AND op.oprname = ANY (@OPERATORS@) LOOP
            FOR variant IN 1..2 LOOP
                n := n + 1;
                seq := pg_catalog.format('public.awa_shadow_hit_%s', n);
                EXECUTE pg_catalog.format('CREATE SEQUENCE %s', seq);
                l := CASE WHEN o.oprleft = 0 THEN NULL WHEN variant = 1 THEN pg_catalog.format_type(o.oprleft, NULL) ELSE 'text' END;
                r := CASE WHEN variant = 1 THEN pg_catalog.format_type(o.oprright, NULL) ELSE 'text' END;
                ret := pg_catalog.format_type(o.oprresult, NULL);
                IF ret LIKE 'any%' THEN ret := 'text'; END IF;
                fn := pg_catalog.format('%I.awa_shadow_op_%s', sch, n);
                BEGIN
                    EXECUTE pg_catalog.format('CREATE FUNCTION %s(%s) RETURNS %s LANGUAGE plpgsql AS %L',
                        fn, pg_catalog.concat_ws(', ', l, r), ret,
                        pg_catalog.format('BEGIN PERFORM public.awa_shadow_count(%L); RETURN NULL; END', seq));
                    EXECUTE pg_catalog.format('CREATE OPERATOR %I.%s (%s RIGHTARG = %s, FUNCTION = %s)',
                        sch, o.oprname, CASE WHEN l IS NULL THEN '' ELSE 'LEFTARG = ' || l || ',' END, r, fn);
                    INSERT INTO public.awa_shadow_map
                        VALUES (seq, pg_catalog.format('OPERATOR %I.%s (%s, %s)', sch, o.oprname, l, r));
                EXCEPTION WHEN OTHERS THEN
                    NULL;
                END;
            END LOOP;
        END LOOP;
    END LOOP;
END
$plant$;
"#;

/// runner/sql/procs.sql as it was before ADR 0048, with its parameters filled in: the call
/// an attacker's `format_type(oid, text)` took over.
const OLD_PROCS: &str = "SELECT p.oid, coalesce(p.proargnames, '{}'::text[]), \
     ARRAY(SELECT format_type(u.t, NULL) \
           FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS u(t, n) ORDER BY u.n), \
     p.proargmodes IS NULL, p.prorettype, p.proretset \
     FROM pg_catalog.pg_proc p \
     WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname = 'format_type' \
     ORDER BY p.oid";

impl Shadowed {
    /// A new database, prepared by `prepare` (given its URL), then shadowed.
    fn plant(prepare: impl FnOnce(&str)) -> Self {
        let admin = dsn();
        let tag = suffix();
        let name = format!("awa_shadow_{tag}");
        let planter = format!("awa_shadow_planter_{tag}");
        sql(&admin, &format!("CREATE DATABASE {name}"));
        let url = with_db(&admin, &name);
        prepare(&url);
        let login = scalar(&url, "SELECT session_user");
        let (functions, operators) = names_used();
        let array = |set: &BTreeSet<String>| {
            let items: Vec<String> = set
                .iter()
                .map(|s| format!("'{}'", s.replace('\'', "''")))
                .collect();
            format!("ARRAY[{}]::name[]", items.join(", "))
        };
        let plant = PLANT.replace("@FUNCTIONS@", &array(&functions)).replace(
            "@OPERATORS@",
            &array(&operators).replace("::name[]", "::text[]"),
        );
        // PostgreSQL 14's default, kept by every upgraded database: anyone may create in public.
        sql(
            &url,
            &format!(
                "CREATE ROLE {planter} NOLOGIN; \
                 GRANT CREATE, USAGE ON SCHEMA public TO {planter}; \
                 CREATE SCHEMA \"{login}\" AUTHORIZATION {planter}; \
                 SET ROLE {planter}; {plant} RESET ROLE;"
            ),
        );
        Self {
            admin,
            name,
            planter,
            url,
        }
    }

    /// The shadows called so far, with their call counts.
    fn hits(&self) -> Vec<String> {
        let counts = sql(
            &self.url,
            "DO $$ DECLARE m record; v bigint; BEGIN \
               CREATE TEMP TABLE hits (shadow text, calls bigint); \
               FOR m IN SELECT * FROM public.awa_shadow_map LOOP \
                 EXECUTE pg_catalog.format('SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s', m.seq) INTO v; \
                 IF v > 0 THEN INSERT INTO hits VALUES (m.shadow, v); END IF; \
               END LOOP; END $$; \
             SELECT shadow || ': ' || calls FROM hits ORDER BY 1",
        );
        counts.into_iter().filter_map(|r| r[0].clone()).collect()
    }

    /// Calls of any shadow made under released Awa's own search path (advisory A9).
    fn released_hits(&self) -> u64 {
        scalar(
            &self.url,
            "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM public.awa_shadow_released",
        )
        .parse()
        .unwrap()
    }

    fn shadows(&self) -> usize {
        scalar(&self.url, "SELECT count(*) FROM public.awa_shadow_map")
            .parse()
            .unwrap()
    }
}

impl Drop for Shadowed {
    fn drop(&mut self) {
        sql(
            &self.admin,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
        sql(
            &self.admin,
            &format!("DROP ROLE IF EXISTS {}", self.planter),
        );
    }
}

fn no_planted_function_or_operator_runs() {
    let db = Shadowed::plant(|_| {});
    let planted = db.shadows();
    assert!(planted > 200, "only {planted} shadows were planted");
    assert!(
        db.hits().is_empty(),
        "a shadow ran during planting: {:?}",
        db.hits()
    );

    // Control 1: the pre-fix procs.sql (format_type unqualified, an unknown-typed NULL), sent
    // as the kit sent it before the pin, from a session with the default search path.
    sql(&db.url, OLD_PROCS);
    let control = db.hits();
    assert!(
        control
            .iter()
            .any(|h| h.contains(".format_type(oid, text)")),
        "the unqualified call of the old procs.sql did not reach the planted \
         format_type(oid, text): {control:?}"
    );
    // Control 2: a planted operator runs where its schema comes first.
    sql(
        &db.url,
        "SET search_path = public, pg_catalog; SELECT 1 = 1",
    );
    let control = db.hits();
    assert!(
        control
            .iter()
            .any(|h| h.starts_with("OPERATOR public.= (integer, integer)")),
        "the planted = (integer, integer) did not run: {control:?}"
    );

    // Every database subcommand of the kit, against the shadowed database.
    let schema = "awa_shadow";
    let role = format!("{schema}_producer_{}", suffix());
    let url = db.url.as_str();
    let with_role = [
        "--dsn",
        url,
        "--schema",
        schema,
        "--producer-role",
        role.as_str(),
    ];
    let producer = support::test_producer("");
    let runs: Vec<(&str, Vec<&str>, i32)> = vec![
        (
            "schema install",
            [&["schema", "install"][..], &with_role].concat(),
            0,
        ),
        (
            "schema status",
            [&["schema", "status"][..], &with_role].concat(),
            0,
        ),
        ("the full --dsn run", [&with_role[..], &["-q"]].concat(), 0),
        (
            "a producer run",
            [
                &with_role[..],
                &["-q", "--producer", producer.as_str(), "producer::"],
            ]
            .concat(),
            0,
        ),
        (
            "fuzz",
            [&["fuzz"][..], &with_role, &["--seed", "1", "--cases", "20"]].concat(),
            0,
        ),
        (
            "schema uninstall",
            [&["schema", "uninstall"][..], &with_role].concat(),
            0,
        ),
    ];
    run_each(&db, &runs);
}

/// Run each subcommand against the shadowed database: none may call a shadow, each must pass.
fn run_each(db: &Shadowed, runs: &[(&str, Vec<&str>, i32)]) {
    let before = db.hits();
    for (what, args, code) in runs {
        let out = run(args, &[], 600);
        let after = db.hits();
        assert_eq!(
            after,
            before,
            "{what} executed planted shadows (each with its call count; the pin of ADR 0048 or a \
             qualified call is missing); its stderr: {}",
            text(&out.stderr)
        );
        assert_eq!(
            out.status.code(),
            Some(*code),
            "{what} on the shadowed database: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
}

/// Released Awa as `awa migrate` leaves it, queue storage activated: the compat profile's
/// sessions (detection, `insert_job_compat` in rolled-back transactions, queue-storage reads,
/// the sweep) call no shadow either.
fn released_awa_compat_run_calls_no_planted_function() {
    let cli = awa_cli().expect("the released awa CLI");
    let db = Shadowed::plant(|url| {
        let out = std::process::Command::new(&cli)
            .arg("migrate")
            .env("DATABASE_URL", url)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "awa migrate: {}", text(&out.stderr));
        assert_eq!(
            scalar(url, "SELECT awa.storage_auto_finalize_if_fresh('awa')"),
            "t"
        );
    });
    let url = db.url.as_str();
    // Exit 7: status recognises released Awa, not the reference.
    run_each(
        &db,
        &[(
            "schema status on released Awa",
            vec!["schema", "status", "--dsn", url],
            7,
        )],
    );
    assert_eq!(
        db.released_hits(),
        0,
        "schema status ran released Awa's functions"
    );
    // The compat run calls insert_job_compat, whose own search path (pg_catalog, awa, public)
    // takes the planted public.format(text, text) over pg_catalog.format(text, VARIADIC "any"):
    // released Awa runs it (advisory A9), its answers break, and the verdict is rightly
    // nonconformant; the kit's own sessions still call no shadow.
    run_each(
        &db,
        &[("the compat --dsn run", vec!["--dsn", url, "-q"], 1)],
    );
    assert!(
        db.released_hits() > 0,
        "released Awa's insert_job_compat no longer runs a planted public.format (advisory A9 \
         no longer reproduces: update docs/advisories.md)"
    );
}

fn main() {
    let cli = awa_cli().is_some();
    main_with(vec![
        (
            "no_planted_function_or_operator_runs",
            Gate::Dsn,
            no_planted_function_or_operator_runs,
        ),
        (
            "released_awa_compat_run_calls_no_planted_function",
            Gate::When(
                cli && std::env::var("DATABASE_URL").is_ok_and(|d| !d.trim().is_empty()),
                "DATABASE_URL and the released awa CLI (pip install -r tests/requirements.txt)",
            ),
            released_awa_compat_run_calls_no_planted_function,
        ),
    ]);
}
