//! The statement cache of a connection: a statement the run sends on every case is prepared
//! once per connection, not once per send, which saves one round trip each time.

use std::sync::Mutex;

use tokio_postgres::Client;

/// The statements prepared on one connection, by SQL text: a statement run on every case
/// is prepared once per connection, not once per run of it (one round trip saved each
/// time). Bound to the connection it was filled on: clear it when the connection changes.
#[derive(Debug, Default)]
pub struct Statements(Mutex<std::collections::HashMap<String, tokio_postgres::Statement>>);

impl Statements {
    /// Forget every statement (the connection they were prepared on is gone).
    pub fn clear(&self) {
        if let Ok(mut map) = self.0.lock() {
            map.clear();
        }
    }

    fn cached(&self, sql: &str) -> Option<tokio_postgres::Statement> {
        self.0.lock().ok().and_then(|map| map.get(sql).cloned())
    }

    /// `sql` prepared on `client`, from the cache when it was prepared before.
    ///
    /// # Errors
    /// The server's error preparing it.
    pub async fn get(
        &self,
        client: &Client,
        sql: &str,
    ) -> Result<tokio_postgres::Statement, tokio_postgres::Error> {
        if let Some(st) = self.cached(sql) {
            return Ok(st);
        }
        let st = client.prepare(sql).await?;
        if let Ok(mut map) = self.0.lock() {
            map.insert(sql.to_owned(), st.clone());
        }
        Ok(st)
    }
}

/// A connection with its [`Statements`]: queries by SQL text, each text prepared once.
#[derive(Debug, Clone, Copy)]
pub struct Cached<'a> {
    /// The connection.
    pub client: &'a Client,
    statements: &'a Statements,
}

type Params<'p> = &'p [&'p (dyn tokio_postgres::types::ToSql + Sync)];

impl<'a> Cached<'a> {
    /// `client` with the statements prepared on it.
    #[must_use]
    pub fn new(client: &'a Client, statements: &'a Statements) -> Self {
        Self { client, statements }
    }

    /// `sql` prepared, once.
    ///
    /// # Errors
    /// The server's error preparing it.
    pub async fn statement(
        &self,
        sql: &str,
    ) -> Result<tokio_postgres::Statement, tokio_postgres::Error> {
        self.statements.get(self.client, sql).await
    }

    /// [`Client::query`] of `sql`, prepared once.
    ///
    /// # Errors
    /// The server's error.
    pub async fn query(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Vec<tokio_postgres::Row>, tokio_postgres::Error> {
        let st = self.statements.get(self.client, sql).await?;
        self.client.query(&st, params).await
    }

    /// [`Client::query_one`] of `sql`, prepared once.
    ///
    /// # Errors
    /// The server's error, or not exactly one row.
    pub async fn query_one(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<tokio_postgres::Row, tokio_postgres::Error> {
        let st = self.statements.get(self.client, sql).await?;
        self.client.query_one(&st, params).await
    }

    /// [`Client::execute`] of `sql`, prepared once.
    ///
    /// # Errors
    /// The server's error.
    pub async fn execute(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<u64, tokio_postgres::Error> {
        let st = self.statements.get(self.client, sql).await?;
        self.client.execute(&st, params).await
    }
}
