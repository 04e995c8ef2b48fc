//! `sql::compat::validation::*`: the released validation of `insert_job_compat` that the
//! contract copies (docs/released-awa.md R2.1, R2.2): SQLSTATE and message of each check at
//! both bounds, the first failing check wins, the last accepted value of each bound, and the
//! empty kind accepted. (A unique_states that is not 8 bits is refused by PostgreSQL's cast
//! to `bit(8)` before the function runs, so no implementation of it could get it wrong.)
//!
//! Released Awa 0.5.x validates with CHECK constraints instead (docs/released-awa.md R8.3): there
//! each bound is checked by its SQLSTATE and the constraint named, and the order cases are not
//! applicable (PostgreSQL evaluates CHECK constraints in name order, which is not R2.2's).

use std::sync::Arc;

use super::{call, case, compat_insert, prepare_insert, CompatCall};
use crate::contract::judge::rejection;
use crate::contract::released::Validation;
use crate::contract::target::DbSetup;
use crate::outcome::{CaseFailure, Verdict};
use crate::suites::db::case::{query_fail, rolled_back, Case};
use crate::suites::db::rejection::{ATTEMPTS_MSG, KIND_MSG, PRIORITY_MSG, QUEUE_MSG, TAGS_MSG};
use crate::suites::db::request::unique_name;
use serde_json::json;

/// The SQLSTATE of every released validation refusal.
const CHECK_VIOLATION: &str = "23514";

/// How a case changes the base call (a scheduled job on a run-scoped queue).
type Build = fn(CompatCall) -> CompatCall;

/// One released validation check (R2.2).
#[derive(Debug, Clone, Copy)]
enum Check {
    Kind,
    Queue,
    Priority,
    MaxAttempts,
    Tags,
}

impl Check {
    /// The message `insert_job_compat` raises (0.6.x).
    const fn message(self) -> &'static str {
        match self {
            Self::Kind => KIND_MSG,
            Self::Queue => QUEUE_MSG,
            Self::Priority => PRIORITY_MSG,
            Self::MaxAttempts => ATTEMPTS_MSG,
            Self::Tags => TAGS_MSG,
        }
    }

    /// The CHECK constraint that refuses it on 0.5.x: `scheduled_jobs`', since every case
    /// inserts a scheduled job.
    const fn constraint(self) -> &'static str {
        match self {
            Self::Kind => "scheduled_jobs_kind_length",
            Self::Queue => "scheduled_jobs_queue_name_length",
            Self::Priority => "scheduled_jobs_priority_in_range",
            Self::MaxAttempts => "scheduled_jobs_max_attempts_range",
            Self::Tags => "scheduled_jobs_tags_count",
        }
    }
}

/// What the call must do.
#[derive(Debug, Clone, Copy)]
enum Want {
    /// Be accepted.
    Accepted,
    /// Be refused by this check (the only one failing).
    Refused(Check),
    /// Be refused by this check, the first in R2.2's order of the several failing.
    First(Check),
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
        Want::Refused(Check::Kind),
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
        Want::Refused(Check::Queue),
    ),
    (
        "priority_0",
        |c| CompatCall { priority: 0, ..c },
        Want::Refused(Check::Priority),
    ),
    (
        "priority_5",
        |c| CompatCall { priority: 5, ..c },
        Want::Refused(Check::Priority),
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
        Want::Refused(Check::MaxAttempts),
    ),
    (
        "max_attempts_1001",
        |c| CompatCall {
            max_attempts: 1001,
            ..c
        },
        Want::Refused(Check::MaxAttempts),
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
        Want::Refused(Check::Tags),
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
        Want::First(Check::Kind),
    ),
    (
        "order_queue_before_priority",
        |c| CompatCall {
            queue: "q".repeat(201),
            priority: 9,
            ..c
        },
        Want::First(Check::Queue),
    ),
    (
        "order_priority_before_max_attempts",
        |c| CompatCall {
            priority: 0,
            max_attempts: 0,
            ..c
        },
        Want::First(Check::Priority),
    ),
    (
        "order_max_attempts_before_tags",
        |c| CompatCall {
            max_attempts: 0,
            tags: tags(21),
            ..c
        },
        Want::First(Check::MaxAttempts),
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
    let released = db.released()?;
    let validation = released.validation();
    if let (Want::First(_), Some(why)) = (want, released.no_validation_order()) {
        return Ok(Verdict::NotApplicable(why));
    }
    rolled_back(db, async |client| {
        // Scheduled: a queue-storage `available` insert also NOTIFYs on the queue's channel,
        // whose 63-byte limit is not part of validation (docs/advisories.md).
        let call = build(call(&unique_name(db)).state("scheduled"));
        let st = prepare_insert(client, db).await?;
        let res = compat_insert(client, &st, &call).await;
        let what = format!("insert_job_compat ({name})");
        let check = match want {
            Want::Accepted => {
                return res
                    .map(|_| Verdict::Passed)
                    .map_err(|e| query_fail(db, &format!("{what} (must be accepted)"), &e))
            }
            Want::Refused(check) | Want::First(check) => check,
        };
        let rej = rejection(db, &what, res)?;
        match validation {
            Validation::Function => {
                rej.expect(&what, CHECK_VIOLATION, None, Some(check.message()))?;
            }
            Validation::Constraints => {
                let constraint = check.constraint();
                if rej.sqlstate != CHECK_VIOLATION || rej.constraint.as_deref() != Some(constraint)
                {
                    return Err(CaseFailure::mismatch(
                        format!(
                            "{what}: {} refuses it with {CHECK_VIOLATION} on the CHECK \
                             constraint {constraint}",
                            released.name()
                        ),
                        json!({"sqlstate": CHECK_VIOLATION, "constraint": constraint}),
                        json!({"sqlstate": rej.sqlstate, "constraint": rej.constraint,
                               "message": rej.message}),
                    ));
                }
            }
        }
        Ok(Verdict::Passed)
    })
}
