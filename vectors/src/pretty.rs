//! The deterministic pretty-printer that writes vector files (ADR 0002 "Files").
//!
//! Our own, not serde_json's: map order, number formatting and escaping are fixed here, so a
//! `preserve_order` feature flip or a serde_json bump cannot move a byte of a frozen file.

use awa_conformance_core::Value;

/// A JSON tree with members in write order. No floats: every non-small number is a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer (only small ones appear in files; large ones are decimal strings).
    Int(i64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, members in write order.
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// A string node.
    pub fn str(s: impl Into<String>) -> Self {
        Self::Str(s.into())
    }

    /// An object node from `(key, value)` pairs in write order.
    pub fn obj<const N: usize>(members: [(&str, Json); N]) -> Self {
        Self::Obj(
            members
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    /// `Str` for `Some`, `Null` for `None`.
    pub fn opt_str(s: Option<String>) -> Self {
        s.map_or(Self::Null, Self::Str)
    }

    #[cfg(feature = "maintainer")]
    fn is_nonempty_container(&self) -> bool {
        match self {
            Self::Arr(a) => !a.is_empty(),
            Self::Obj(o) => !o.is_empty(),
            _ => false,
        }
    }

    /// Written on one line: no member is a non-empty container, or the node is a typed-object
    /// member pair `["key", X]` whose X itself fits on one line.
    #[cfg(feature = "maintainer")]
    fn is_flat(&self) -> bool {
        match self {
            Self::Arr(a) => match a.as_slice() {
                [Self::Str(_), x] => !x.is_nonempty_container() || x.is_flat(),
                _ => !a.iter().any(Self::is_nonempty_container),
            },
            Self::Obj(o) => !o.iter().any(|(_, v)| v.is_nonempty_container()),
            _ => true,
        }
    }

    /// The same tree as a `serde_json` value (object members then sort by key).
    #[must_use]
    pub fn to_serde(&self) -> serde_json::Value {
        match self {
            Self::Null => serde_json::Value::Null,
            Self::Bool(b) => serde_json::Value::Bool(*b),
            Self::Int(i) => serde_json::Value::from(*i),
            Self::Str(s) => serde_json::Value::String(s.clone()),
            Self::Arr(a) => serde_json::Value::Array(a.iter().map(Self::to_serde).collect()),
            Self::Obj(o) => serde_json::Value::Object(
                o.iter().map(|(k, v)| (k.clone(), v.to_serde())).collect(),
            ),
        }
    }

    /// A `serde_json` value as a tree (members in the parser's order; a number that is not an
    /// i64 becomes its decimal text, which files never hold).
    #[must_use]
    pub fn from_serde(v: &serde_json::Value) -> Self {
        match v {
            serde_json::Value::Null => Self::Null,
            serde_json::Value::Bool(b) => Self::Bool(*b),
            serde_json::Value::Number(n) => n
                .as_i64()
                .map_or_else(|| Self::Str(n.to_string()), Self::Int),
            serde_json::Value::String(s) => Self::Str(s.clone()),
            serde_json::Value::Array(a) => Self::Arr(a.iter().map(Self::from_serde).collect()),
            serde_json::Value::Object(o) => Self::Obj(
                o.iter()
                    .map(|(k, v)| (k.clone(), Self::from_serde(v)))
                    .collect(),
            ),
        }
    }

    /// The same tree as a core [`Value`] (for canonical-JSON content hashing).
    #[must_use]
    pub fn to_value(&self) -> Value {
        match self {
            Self::Null => Value::Null,
            Self::Bool(b) => Value::Bool(*b),
            Self::Int(i) => Value::Int(*i),
            Self::Str(s) => Value::String(s.clone()),
            Self::Arr(a) => Value::Array(a.iter().map(Self::to_value).collect()),
            Self::Obj(o) => {
                Value::Object(o.iter().map(|(k, v)| (k.clone(), v.to_value())).collect())
            }
        }
    }
}

/// Render a document: 2-space indent, `\n` line ends, final newline.
///
/// Layout rule: a container none of whose members is a non-empty container is written on one
/// line (`[1, 2]`, `{"type": "int", "value": "5"}`), and so is a two-element array of a string
/// and a one-line container (a typed-object member `["k", {"type": "int", "value": "5"}]`);
/// any other container puts one member per line. Strings escape `"` `\`, the C0 controls (`\b \f \n \r \t`, else `\u00xx`), DEL and
/// U+2028/U+2029 (as `\u007f`, `\u2028`, `\u2029`, lowercase hex); all other text is raw UTF-8.
#[cfg(feature = "maintainer")]
#[must_use]
pub fn render(doc: &Json) -> String {
    let mut out = String::new();
    write_node(doc, 0, &mut out);
    out.push('\n');
    out
}

#[cfg(feature = "maintainer")]
fn write_node(node: &Json, indent: usize, out: &mut String) {
    match node {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Int(i) => out.push_str(&i.to_string()),
        Json::Str(s) => write_str(s, out),
        Json::Arr(items) => {
            if !node.is_flat() {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    pad(indent + 1, out);
                    write_node(item, indent + 1, out);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                pad(indent, out);
                out.push(']');
            } else {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_node(item, indent, out);
                }
                out.push(']');
            }
        }
        Json::Obj(members) => {
            if !node.is_flat() {
                out.push_str("{\n");
                for (i, (k, v)) in members.iter().enumerate() {
                    pad(indent + 1, out);
                    write_str(k, out);
                    out.push_str(": ");
                    write_node(v, indent + 1, out);
                    out.push_str(if i + 1 < members.len() { ",\n" } else { "\n" });
                }
                pad(indent, out);
                out.push('}');
            } else {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_str(k, out);
                    out.push_str(": ");
                    write_node(v, indent, out);
                }
                out.push('}');
            }
        }
    }
}

#[cfg(feature = "maintainer")]
fn pad(indent: usize, out: &mut String) {
    for _ in 0..indent {
        out.push_str("  ");
    }
}

#[cfg(feature = "maintainer")]
fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0}'..='\u{1f}' | '\u{7f}' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            _ => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(all(test, feature = "maintainer"))]
mod tests {
    use super::*;

    #[test]
    fn layout_and_escapes() {
        let doc = Json::obj([
            ("a", Json::Arr(vec![Json::Int(1), Json::Int(-2)])),
            (
                "b",
                Json::obj([("t", Json::str("\u{0}\u{7f}\u{2028}é\"\n"))]),
            ),
            ("c", Json::Arr(vec![])),
            ("d", Json::Null),
        ]);
        assert_eq!(
            render(&doc),
            "{\n  \"a\": [1, -2],\n  \"b\": {\"t\": \"\\u0000\\u007f\\u2028é\\\"\\n\"},\n  \"c\": [],\n  \"d\": null\n}\n"
        );
        let parsed: serde_json::Value = serde_json::from_str(&render(&doc)).unwrap();
        assert_eq!(parsed["b"]["t"], "\u{0}\u{7f}\u{2028}é\"\n");
    }
}
