//! Released Awa as preflight recognises it: a `schema_version` table, an
//! `insert_job_compat` that takes `p_ordering_key`, no `insert_job` (docs/released-awa.md).
//! The compat profile (`sql::compat::*`) and the producer engine's released target read
//! what was found here.

use tokio_postgres::Client;

use crate::pg::quote_ident;

/// Released Awa as preflight found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    /// `max(version)` of `schema_version`.
    pub schema_version: i32,
    /// `active_queue_storage_schema()`: the queue-storage schema, or `None` on the canonical
    /// engine.
    pub storage_schema: Option<String>,
}

impl Released {
    /// The provenance line naming what was checked.
    #[must_use]
    pub fn describe(&self) -> String {
        format!(
            "released Awa, schema version {}, insert_job_compat, storage engine {}",
            self.schema_version,
            self.engine()
        )
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
            "{what} (schema version {}): this case checks contract v1, which arrives with \
             awa.insert_job; the sql::compat::* cases check insert_job_compat instead",
            self.schema_version
        )
    }
}

/// Whether `schema` holds released Awa (see the module docs); `None`: it does not (the
/// caller reports the contract schema as missing).
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
    let (versions, compat, insert_job, locator): (bool, bool, bool, bool) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    if !(versions && compat && !insert_job && locator) {
        return Ok(None);
    }
    let row = client
        .query_one(
            &include_str!("../../sql/compat_released.sql").replace("@S@", &quote_ident(schema)),
            &[],
        )
        .await?;
    Ok(Some(Released {
        schema_version: row.get::<_, Option<i32>>(0).unwrap_or(0),
        storage_schema: row.get(1),
    }))
}
