//! `sql::compat::validation::*`: the released validation of `insert_job_compat` that the
//! contract copies (docs/released-awa.md R2.1, R2.2): SQLSTATE and message of each check at
//! both bounds, the first failing check wins, the last accepted value of each bound, and the
//! empty kind accepted. (A unique_states that is not 8 bits is refused by PostgreSQL's cast
//! to `bit(8)` before the function runs, so no implementation of it could get it wrong.)

use std::sync::Arc;

use super::{call, case, compat_insert, prepare_insert, CompatCall};
use crate::contract::judge::rejection;
use crate::contract::target::DbSetup;
use crate::outcome::{CaseFailure, Verdict};
use crate::suites::db::case::{query_fail, rolled_back, Case};
use crate::suites::db::rejection::{ATTEMPTS_MSG, KIND_MSG, PRIORITY_MSG, QUEUE_MSG, TAGS_MSG};
use crate::suites::db::request::unique_name;

/// How a case changes the base call (an available job on a run-scoped queue).
type Build = fn(CompatCall) -> CompatCall;

/// What the call must do: be accepted, or be refused with (SQLSTATE, message).
#[derive(Debug, Clone, Copy)]
enum Want {
    Accepted,
    Refused(&'static str, Option<&'static str>),
}

const fn refused(message: &'static str) -> Want {
    Want::Refused("23514", Some(message))
}

fn tags(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("t{i}")).collect()
}

/// Every validation case: (name, build, expected outcome).
const CASES: &[(&str, Build, Want)] = &[
    (
        "kind_201_chars",
        |c| CompatCall {
            kind: "k".repeat(201),
            ..c
        },
        refused(KIND_MSG),
    ),
    // Characters, not bytes: 200 two-byte characters are accepted.
    (
        "kind_200_chars_accepted",
        |c| CompatCall {
            kind: "é".repeat(200),
            ..c
        },
        Want::Accepted,
    ),
    (
        "queue_201_chars",
        |c| CompatCall {
            queue: format!("{}{}", c.queue, "q".repeat(201)),
            ..c
        },
        refused(QUEUE_MSG),
    ),
    (
        "priority_0",
        |c| CompatCall { priority: 0, ..c },
        refused(PRIORITY_MSG),
    ),
    (
        "priority_5",
        |c| CompatCall { priority: 5, ..c },
        refused(PRIORITY_MSG),
    ),
    (
        "priority_1_accepted",
        |c| CompatCall { priority: 1, ..c },
        Want::Accepted,
    ),
    (
        "priority_4_accepted",
        |c| CompatCall { priority: 4, ..c },
        Want::Accepted,
    ),
    (
        "max_attempts_0",
        |c| CompatCall {
            max_attempts: 0,
            ..c
        },
        refused(ATTEMPTS_MSG),
    ),
    (
        "max_attempts_1001",
        |c| CompatCall {
            max_attempts: 1001,
            ..c
        },
        refused(ATTEMPTS_MSG),
    ),
    (
        "max_attempts_1000_accepted",
        |c| CompatCall {
            max_attempts: 1000,
            ..c
        },
        Want::Accepted,
    ),
    (
        "tags_21",
        |c| CompatCall {
            tags: tags(21),
            ..c
        },
        refused(TAGS_MSG),
    ),
    (
        "tags_20_accepted",
        |c| CompatCall {
            tags: tags(20),
            ..c
        },
        Want::Accepted,
    ),
    // First failing check wins: kind before queue before priority before max_attempts before tags.
    (
        "order_kind_before_priority",
        |c| CompatCall {
            kind: "k".repeat(201),
            priority: 0,
            ..c
        },
        refused(KIND_MSG),
    ),
    (
        "order_queue_before_priority",
        |c| CompatCall {
            queue: "q".repeat(201),
            priority: 9,
            ..c
        },
        refused(QUEUE_MSG),
    ),
    (
        "order_priority_before_max_attempts",
        |c| CompatCall {
            priority: 0,
            max_attempts: 0,
            ..c
        },
        refused(PRIORITY_MSG),
    ),
    (
        "order_max_attempts_before_tags",
        |c| CompatCall {
            max_attempts: 0,
            tags: tags(21),
            ..c
        },
        refused(ATTEMPTS_MSG),
    ),
    (
        "empty_kind_accepted",
        |c| CompatCall {
            kind: String::new(),
            ..c
        },
        Want::Accepted,
    ),
];

/// The validation cases.
pub(super) fn cases() -> Vec<Case> {
    CASES
        .iter()
        .map(|&(name, build, want)| {
            case("validation", name, move |db| check(&db, name, build, want))
        })
        .collect()
}

fn check(db: &Arc<DbSetup>, name: &str, build: Build, want: Want) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        // Scheduled: a queue-storage `available` insert also NOTIFYs on the queue's channel,
        // whose 63-byte limit is not part of validation (docs/advisories.md).
        let call = build(call(&unique_name(db)).state("scheduled"));
        let st = prepare_insert(client, db).await?;
        let res = compat_insert(client, &st, &call).await;
        let what = format!("insert_job_compat ({name})");
        match want {
            Want::Accepted => res
                .map(|_| Verdict::Passed)
                .map_err(|e| query_fail(db, &format!("{what} (must be accepted)"), &e)),
            Want::Refused(sqlstate, message) => {
                rejection(db, &what, res)?.expect(&what, sqlstate, None, message)?;
                Ok(Verdict::Passed)
            }
        }
    })
}
