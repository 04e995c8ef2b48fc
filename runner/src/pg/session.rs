//! What every session of the kit pins at startup: the search path, the timeouts and the
//! settings that would otherwise let a legal server configuration change a verdict.
//!
//! They are sent as startup options rather than `SET` statements so that they hold from the
//! first statement and win over role, database and DSN settings (ADRs 0048, 0060).

use super::{IDLE_IN_TRANSACTION_TIMEOUT, STATEMENT_TIMEOUT};

/// The search path of every session the kit opens (runner, producer engine, fuzz, schema
/// install/status/uninstall, the Python bindings), sent as a startup option so it holds from
/// the first statement and wins over role, database and DSN `options` settings (ADR 0048).
/// With `"$user", public` on the path, a role that can create in `public` or in a schema
/// named after the login can plant a better-matching function or operator (an unknown-typed
/// literal is enough, CVE-2018-1058) that then runs with the runner's rights. `pg_catalog`
/// first and `pg_temp` last, with nothing else, leaves no schema a third party can write to:
/// operators and functions resolve in `pg_catalog` only (functions and operators are never
/// looked up in `pg_temp`), and every contract object is named through its quoted schema.
pub const SESSION_SEARCH_PATH: &str = "pg_catalog,pg_temp";

/// Timeouts only newer servers know (idle_session_timeout 14+, transaction_timeout 17+):
/// the runner turns them off too, and drops each from its startup options once a server
/// says it does not know it (see [`Pg::connect_with`](super::Pg::connect_with)).
pub(super) const NEWER_TIMEOUTS: [&str; 2] = ["idle_session_timeout", "transaction_timeout"];

/// The settings every session of the kit pins besides the search path and the timeouts
/// (ADR 0060): each is one a database or role may carry (`ALTER DATABASE|ROLE ... SET`) and
/// that changes how the kit's SQL is parsed, how a value it sends is read, how a value it
/// reads is written, or how its statements may fail. Pinned, a legal server configuration
/// cannot change a verdict. `client_encoding` is UTF8 already (the driver sends it).
/// `default_transaction_read_only` is deliberately not pinned: a read-only database is the
/// owner's decision, refused in one line by a run and honoured by `schema status`.
pub const SESSION_SETTINGS: [(&str, &str); 12] = [
    // A serializable default turns the run's own concurrent statements into 40001 failures.
    ("default_transaction_isolation", "read\\ committed"),
    // pg_get_function_arguments and format_type quote every name under it.
    ("quote_all_identifiers", "off"),
    // Off, a '\x..' literal is an escape string: another digest, or "invalid byte sequence".
    ("standard_conforming_strings", "on"),
    // How dates, times, intervals and time zones the kit reads back are written.
    ("DateStyle", "ISO,MDY"),
    ("IntervalStyle", "postgres"),
    ("TimeZone", "UTC"),
    // How floats and bytea the kit reads as text are written.
    ("extra_float_digits", "1"),
    ("bytea_output", "hex"),
    // `x = NULL` read as `x IS NULL`, and an unquoted NULL in an array literal as a string.
    ("transform_null_equals", "off"),
    ("array_nulls", "on"),
    // On, every error the kit expects (a refusal it checks for) would end the session.
    ("exit_on_error", "off"),
    // Off, a table with row security makes the kit's reads fail instead of filtering.
    ("row_security", "on"),
];

/// The runner's own session settings, sent as startup options: they take precedence over
/// role and database settings (`ALTER ROLE ... SET statement_timeout`) from the first moment
/// of the session, and they come after the user's `options` so they win over those too.
pub(super) fn session_options(user_options: Option<&str>, newer: &[&str]) -> String {
    let mut ours = format!(
        "-c search_path={SESSION_SEARCH_PATH} -c statement_timeout={} -c lock_timeout={} \
         -c idle_in_transaction_session_timeout={}",
        STATEMENT_TIMEOUT.as_millis(),
        STATEMENT_TIMEOUT.as_millis(),
        IDLE_IN_TRANSACTION_TIMEOUT.as_millis()
    );
    for (name, value) in SESSION_SETTINGS {
        ours.push_str(&format!(" -c {name}={value}"));
    }
    for name in newer {
        ours.push_str(&format!(" -c {name}=0"));
    }
    match user_options.map(str::trim).filter(|o| !o.is_empty()) {
        Some(user) => format!("{user} {ours}"),
        None => ours,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::pg::{Dsn, DsnSource};

    #[test]
    fn session_settings_come_after_the_user_s_options() {
        let d = Dsn::parse(
            "host=h options='-c work_mem=64MB'",
            DsnSource::Flag,
            &BTreeMap::new(),
        )
        .unwrap();
        let opts = session_options(d.user_options.as_deref(), &NEWER_TIMEOUTS);
        assert!(
            opts.starts_with(
                "-c work_mem=64MB -c search_path=pg_catalog,pg_temp -c statement_timeout=30000"
            ),
            "{opts}"
        );
        // A DSN's own search_path comes first, so the pinned one (later) wins.
        let d = Dsn::parse(
            "host=h options='-c search_path=public'",
            DsnSource::Flag,
            &BTreeMap::new(),
        )
        .unwrap();
        let opts = session_options(d.user_options.as_deref(), &NEWER_TIMEOUTS);
        let pinned = opts.find("search_path=pg_catalog,pg_temp");
        assert!(pinned > opts.find("search_path=public"), "{opts}");
        assert!(
            opts.contains("idle_in_transaction_session_timeout="),
            "{opts}"
        );
        assert!(opts.ends_with("-c transaction_timeout=0"), "{opts}");
    }
}
