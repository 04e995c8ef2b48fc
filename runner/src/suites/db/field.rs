//! `sql::field::<class>` (docs/contract.md §16): one request per input class of each payload
//! field ([`crate::contract::space`]), every other field at its default, on the case's own
//! queue. A class the database must store is read back whole through `job_stored` and judged
//! by the one payload rule (through `insert_and_read_all`, with the row count); a class it
//! must refuse must end in that SQLSTATE (a statement that raises stores nothing).

use std::sync::Arc;

use super::case::{query_fail, rolled_back, Case};
use super::request::{insert_and_read_all, unique_name, InsertJob, Rows};
use crate::contract::call;
use crate::contract::judge::rejection;
use crate::contract::space::{self, Class, Expect};
use crate::contract::target::DbSetup;
use crate::outcome::{CaseFailure, Layer, Verdict};

/// The `sql::field::*` cases, one per class.
pub(super) fn cases() -> Vec<Case> {
    space::classes()
        .into_iter()
        .map(|class| {
            let (id, expect) = (class.id, class.expect);
            let case = Case::new("field", id, move |db| check(&db, &class));
            match expect {
                // Judging the stored job needs the revision 1.2 read function.
                Expect::Stored => case.requires("job_stored"),
                Expect::Refused(_) => case,
            }
        })
        .collect()
}

fn check(db: &Arc<DbSetup>, class: &Class) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let mut req = InsertJob::new(space::KIND, &unique_name(db));
        class.apply_call(&mut req);
        let what = format!("{} ({})", class.id, class.what);
        match class.expect {
            Expect::Stored => {
                insert_and_read_all(client, db, std::slice::from_ref(&req), Rows::Counted)
                    .await
                    .map_err(|f| CaseFailure {
                        message: format!("{what}: {}", f.message),
                        ..f
                    })?;
            }
            Expect::Refused(sqlstate) => {
                let st = client
                    .prepare(&call::insert_sql(db))
                    .await
                    .map_err(|e| query_fail(db, "preparing insert_job", &e))?;
                let refused = rejection(db, &what, call::insert(client, &st, &req).await)?;
                if refused.sqlstate != sqlstate {
                    return Err(CaseFailure::at(
                        Layer::Payload,
                        format!(
                            "{what}: must be refused with {sqlstate}, got {} {}",
                            refused.sqlstate, refused.message
                        ),
                        serde_json::json!({"sqlstate": sqlstate}),
                        refused.to_json(),
                    ));
                }
            }
        }
        Ok(Verdict::Passed)
    })
}
