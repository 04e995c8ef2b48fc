//! Identifiers in SQL text: quoting, the checked schema name and the one placeholder rule of
//! the kit's SQL files.
//!
//! Identifiers cannot be bind parameters, so they are written into SQL text; this is the one
//! place that quotes them, so a name that needs quoting (mixed case, spaces, `"`) is quoted the
//! same way everywhere and none is quoted twice.

use std::fmt;

/// `name` as a double-quoted SQL identifier (a `"` inside is doubled), for SQL text.
#[must_use]
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The longest identifier PostgreSQL keeps (NAMEDATALEN - 1 bytes); a longer one is truncated.
pub const MAX_IDENTIFIER_BYTES: usize = 63;

/// The one placeholder rule of the kit's SQL files (`runner/sql/*.sql`): `@S@` stands for the
/// quoted contract schema, and `@X@` (one capital letter) for another identifier the caller
/// quotes; a placeholder is replaced by text, never bound, because identifiers cannot be
/// parameters. Every file is filled through this trait, so the rule has one place.
pub trait SqlText {
    /// The text with `@S@` replaced by the quoted schema (`SchemaName::quoted`).
    fn in_schema(&self, quoted_schema: &str) -> String;
}

impl SqlText for str {
    fn in_schema(&self, quoted_schema: &str) -> String {
        self.replace("@S@", quoted_schema)
    }
}

impl SqlText for String {
    fn in_schema(&self, quoted_schema: &str) -> String {
        self.as_str().in_schema(quoted_schema)
    }
}

/// The schema holding the contract functions: checked once, where the command line is read,
/// and carried with its quoted form, so SQL text never quotes it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaName {
    name: String,
    quoted: String,
}

impl SchemaName {
    /// Check `name`: PostgreSQL could name a schema so (not empty, no NUL byte, at most
    /// [`MAX_IDENTIFIER_BYTES`] bytes, since a longer name would silently mean its truncation).
    ///
    /// # Errors
    /// What is wrong with the name, and the fix.
    pub fn new(name: &str) -> Result<Self, String> {
        if name.is_empty() {
            return Err(
                "a schema name cannot be empty; pass the schema that holds the contract \
                        (default awa)"
                    .to_owned(),
            );
        }
        if name.contains('\0') {
            return Err("a schema name cannot contain a NUL byte".to_owned());
        }
        if name.len() > MAX_IDENTIFIER_BYTES {
            return Err(format!(
                "{} bytes is longer than PostgreSQL's {MAX_IDENTIFIER_BYTES}-byte identifier \
                 limit, so no schema can have this name; pass the schema's real name",
                name.len()
            ));
        }
        Ok(Self {
            name: name.to_owned(),
            quoted: quote_ident(name),
        })
    }

    /// The name itself, for bind parameters (`nspname = $1`) and messages.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The double-quoted identifier, for SQL text.
    #[must_use]
    pub fn quoted(&self) -> &str {
        &self.quoted
    }
}

impl fmt::Display for SchemaName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl std::str::FromStr for SchemaName {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::new(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_checked_once_and_carried_quoted() {
        let s = SchemaName::new("My \"odd\" schema").unwrap();
        assert_eq!(s.quoted(), "\"My \"\"odd\"\" schema\"");
        assert_eq!(s.as_str(), "My \"odd\" schema");
        assert_eq!(s.to_string(), "My \"odd\" schema");
        assert!(SchemaName::new("").is_err());
        assert!(SchemaName::new("a\0b").is_err());
        assert!(SchemaName::new(&"a".repeat(MAX_IDENTIFIER_BYTES)).is_ok());
        assert!(SchemaName::new(&"a".repeat(MAX_IDENTIFIER_BYTES + 1)).is_err());
    }
}
