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

/// The one placeholder rule of the kit's SQL text (`runner/sql/*.sql` and the statements in
/// `runner/src`): `@NAME@`, NAME in capital letters, stands for SQL text the caller gives,
/// always built from quoted identifiers (`@S@` is the quoted contract schema, the others a
/// quoted table, role or column, or a schema-qualified name); a placeholder is replaced by
/// text, never bound, because identifiers cannot be parameters. Every text is filled through
/// this trait, in one pass: a value is never scanned again, so a name holding `@T@` (a schema
/// may be called anything) cannot fill another placeholder. A placeholder with no value given
/// stays as written, and PostgreSQL refuses the statement.
pub trait SqlText {
    /// The text with each `@NAME@` of `values` replaced by its value, in one pass.
    fn fill(&self, values: &[(&str, &str)]) -> String;

    /// The text with `@S@` replaced by the quoted schema (`SchemaName::quoted`).
    fn in_schema(&self, quoted_schema: &str) -> String {
        self.fill(&[("S", quoted_schema)])
    }
}

impl SqlText for str {
    fn fill(&self, values: &[(&str, &str)]) -> String {
        let mut out = String::with_capacity(self.len());
        let mut rest = self;
        while let Some((before, after)) = rest.split_once('@') {
            out.push_str(before);
            let name_len = after.bytes().take_while(u8::is_ascii_uppercase).count();
            let (name, tail) = after.split_at(name_len);
            let value = tail
                .strip_prefix('@')
                .filter(|_| name_len > 0)
                .and_then(|tail| {
                    values
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map(|(_, v)| (*v, tail))
                });
            match value {
                Some((v, tail)) => {
                    out.push_str(v);
                    rest = tail;
                }
                None => {
                    out.push('@');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

impl SqlText for String {
    fn fill(&self, values: &[(&str, &str)]) -> String {
        self.as_str().fill(values)
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
    fn placeholders_are_filled_in_one_pass() {
        let sql = "SELECT @ID@ FROM @S@.@T@ WHERE login = @L@ AND note = 'a@b' -- @Z@";
        let schema = quote_ident("x@T@y");
        let table = quote_ident("jobs @L@");
        let filled = sql.fill(&[
            ("S", &schema),
            ("T", &table),
            ("ID", "\"id\""),
            ("L", "\"l\""),
        ]);
        // A value holding a placeholder's spelling is not scanned again; an unknown one stays.
        assert_eq!(
            filled,
            "SELECT \"id\" FROM \"x@T@y\".\"jobs @L@\" WHERE login = \"l\" AND note = 'a@b' -- @Z@"
        );
        assert_eq!("@S@.f(@@)".in_schema("\"s\""), "\"s\".f(@@)");
        assert_eq!("no placeholder @".fill(&[("S", "x")]), "no placeholder @");
    }

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
