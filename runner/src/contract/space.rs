//! The request's input space (docs/contract.md §16): for each payload member of a request,
//! its classes of input (the edges of its valid range and the values just outside it, empty
//! and absent, non-ASCII, normalisation forms and whitespace, duplicates and order, maxima,
//! offsets and precision), each with one value that sends it and what the database must make
//! of it (stored as asked, or refused with a SQLSTATE).
//!
//! Why one table: the SQL suites (`sql::field::<class>`), the producer engine
//! (`producer::field::<class>`) and the fuzzer draw from it, and docs/input-space.md is
//! generated from it beside the mutants that show each class caught, so a class added here is
//! sent everywhere and shows up as uncovered until a mutant proves it checked.
//!
//! Pure: values in, values out. A queue class is a shape applied to the case's own queue
//! (a run deletes only the queues it made), so `queue` here is a suffix or a length.

use serde_json::{json, Value as Json};

use super::call::InsertJob;
use super::expect::exercise;
use crate::protocol::Job;

/// A payload member of a request with input classes here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    /// `p_kind`.
    Kind,
    /// `p_queue`.
    Queue,
    /// `p_priority`.
    Priority,
    /// `p_max_attempts`.
    MaxAttempts,
    /// `p_run_at`.
    RunAt,
    /// `p_tags`.
    Tags,
    /// `p_metadata`.
    Metadata,
}

impl Field {
    /// The member's name, as the request and docs/contract.md spell it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Kind => "kind",
            Self::Queue => "queue",
            Self::Priority => "priority",
            Self::MaxAttempts => "max_attempts",
            Self::RunAt => "run_at",
            Self::Tags => "tags",
            Self::Metadata => "metadata",
        }
    }
}

/// What the database must make of a class's request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Stored as asked (docs/contract.md §15), one job.
    Stored,
    /// Refused with this SQLSTATE, nothing stored.
    Refused(&'static str),
}

/// The queue a queue class asks for, made from the case's own queue `base`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueShape {
    /// `base` followed by this text.
    Suffix(&'static str),
    /// `base` padded with this character to exactly this many characters.
    Length(usize, char),
}

impl QueueShape {
    /// The queue name for a case whose own queue is `base`.
    #[must_use]
    pub fn queue(&self, base: &str) -> String {
        match self {
            Self::Suffix(s) => format!("{base}{s}"),
            Self::Length(n, c) => {
                let have = base.chars().count();
                let mut q = base.to_owned();
                q.extend(std::iter::repeat_n(*c, n.saturating_sub(have)));
                q
            }
        }
    }
}

/// The value a class sends in its field.
#[derive(Debug, Clone, PartialEq)]
pub enum Sent {
    /// The kind.
    Kind(String),
    /// The queue, from the case's own.
    Queue(QueueShape),
    /// The priority.
    Priority(i16),
    /// The max_attempts.
    MaxAttempts(i16),
    /// The run_at, RFC 3339 text with an offset.
    RunAt(&'static str),
    /// The tags, in order.
    Tags(Vec<String>),
    /// The metadata, in the typed JSON form the producer protocol sends.
    Metadata(Json),
}

/// One class of one field's input space.
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    /// Stable ID, `<field>.<class>`: the last segment of the cases' names.
    pub id: &'static str,
    /// The field.
    pub field: Field,
    /// What the class is, in a few words (docs/contract.md §16).
    pub what: &'static str,
    /// The value that sends it.
    pub sent: Sent,
    /// What the database must make of it.
    pub expect: Expect,
}

impl Class {
    /// The metadata's canonical JSON text (what the SQL engines bind), for a metadata class.
    #[must_use]
    pub fn metadata_text(&self) -> Option<String> {
        let Sent::Metadata(typed) = &self.sent else {
            return None;
        };
        let value = awa_conformance_vectors::decode_typed(typed, "metadata").ok()?;
        String::from_utf8(awa_conformance_core::canonical_json(&value).ok()?).ok()
    }

    /// The value this class sends, as docs/input-space.md shows it (a long kind as its
    /// length and character, a queue as its shape).
    #[must_use]
    pub fn shown(&self) -> String {
        match &self.sent {
            Sent::Kind(k) if k.chars().count() > 40 => {
                let first = k.chars().next().unwrap_or(' ');
                format!("{} × `{first}`", k.chars().count())
            }
            Sent::Kind(k) => format!("{k:?}"),
            Sent::Queue(QueueShape::Suffix(s)) => format!("the case's queue + {s:?}"),
            Sent::Queue(QueueShape::Length(n, ch)) => {
                format!("the case's queue padded with `{ch}` to {n} characters")
            }
            Sent::Priority(p) | Sent::MaxAttempts(p) => p.to_string(),
            Sent::RunAt(t) => format!("`{t}`"),
            Sent::Tags(t) if t.len() > 4 => format!("{} tags `t01`…", t.len()),
            Sent::Tags(t) => format!("{t:?}"),
            Sent::Metadata(_) => format!("`{}`", self.metadata_text().unwrap_or_default()),
        }
    }

    /// Put this class's value into the logical request `job` (what a producer is sent, and,
    /// through [`InsertJob::of_job`], the reference call), whose queue is the case's own (a
    /// queue class derives its queue from it).
    pub fn apply(&self, job: &mut Job) {
        match &self.sent {
            Sent::Kind(k) => k.clone_into(&mut job.kind),
            Sent::Queue(shape) => job.queue = shape.queue(&job.queue),
            Sent::Priority(p) => job.priority = Some(*p),
            Sent::MaxAttempts(m) => job.fields_3_mut().max_attempts = Some(*m),
            Sent::RunAt(t) => job.run_at = Some((*t).to_owned()),
            Sent::Tags(t) => t.clone_into(&mut job.tags),
            Sent::Metadata(typed) => {
                job.fields_3_mut().metadata = Some(typed.clone());
            }
        }
    }

    /// Put this class's value into a bound call the SQL engines built themselves (their args
    /// and metadata texts hold what the typed form cannot say, such as 2^96 or `1.50`), as
    /// [`InsertJob::of_job`] binds it. A metadata class whose typed form does not decode
    /// leaves the metadata as it was; `every_metadata_class_has_its_text` rules that out.
    pub fn apply_call(&self, call: &mut InsertJob) {
        match &self.sent {
            Sent::Kind(k) => k.clone_into(&mut call.kind),
            Sent::Queue(shape) => call.queue = shape.queue(&call.queue),
            Sent::Priority(p) => call.priority = *p,
            Sent::MaxAttempts(m) => call.max_attempts = *m,
            Sent::RunAt(t) => call.run_at = Some((*t).to_owned()),
            Sent::Tags(t) => t.clone_into(&mut call.tags),
            Sent::Metadata(_) => {
                if let Some(text) = self.metadata_text() {
                    call.metadata = text;
                }
            }
        }
    }
}

/// The SQLSTATE of released validation (kind, queue, priority, max_attempts, tags).
pub const RELEASED_CHECK: &str = "23514";
/// The kind a class of another field sends.
pub const KIND: &str = "awa_conformance.field";

fn s(v: &str) -> Json {
    json!({"type": "string", "value": v})
}

fn tags(list: &[&str]) -> Vec<String> {
    list.iter().map(|t| (*t).to_owned()).collect()
}

/// The class a fuzzer's `n`th generated value travels with: the stored classes in turn (a
/// refused one would leave the value unjudged), built once, so both fuzzers (database and
/// producer) draw from the same space as the suites send one class at a time.
#[must_use]
pub fn stored_class(n: u64) -> Option<&'static Class> {
    static STORED: std::sync::LazyLock<Vec<Class>> = std::sync::LazyLock::new(|| {
        classes()
            .into_iter()
            .filter(|c| c.expect == Expect::Stored)
            .collect()
    });
    let len = u64::try_from(STORED.len()).ok().filter(|l| *l > 0)?;
    STORED.get(usize::try_from(n % len).ok()?)
}

/// Every class, in the order docs/contract.md §16 lists them. IDs never change once released.
#[must_use]
#[expect(clippy::too_many_lines, reason = "one table: one entry per class")]
pub fn classes() -> Vec<Class> {
    use Expect::{Refused, Stored};
    use Field as F;
    let c = |id, field, what, sent, expect| Class {
        id,
        field,
        what,
        sent,
        expect,
    };
    vec![
        // kind: text of at most 200 characters, byte for byte.
        c(
            "kind.case_and_non_ascii",
            F::Kind,
            "mixed case, punctuation and non-ASCII: no case folding",
            Sent::Kind(exercise::KIND.to_owned()),
            Stored,
        ),
        c(
            "kind.decomposed",
            F::Kind,
            "a combining accent (NFD): no Unicode normalisation",
            Sent::Kind("Cafe\u{301}.Job".to_owned()),
            Stored,
        ),
        c(
            "kind.whitespace",
            F::Kind,
            "leading and trailing spaces and a tab: no trimming",
            Sent::Kind("  awa kind\t".to_owned()),
            Stored,
        ),
        c(
            "kind.max",
            F::Kind,
            "200 characters of two bytes each: the limit counts characters",
            Sent::Kind("é".repeat(200)),
            Stored,
        ),
        c(
            "kind.over_max",
            F::Kind,
            "201 characters: refused by released validation",
            Sent::Kind("k".repeat(201)),
            Refused(RELEASED_CHECK),
        ),
        // queue: text of at most 200 characters, byte for byte.
        c(
            "queue.case_and_non_ascii",
            F::Queue,
            "mixed case and non-ASCII: no case folding",
            Sent::Queue(QueueShape::Suffix("_Ünï")),
            Stored,
        ),
        c(
            "queue.whitespace",
            F::Queue,
            "an inner space and a trailing tab: no trimming",
            Sent::Queue(QueueShape::Suffix(" q\t")),
            Stored,
        ),
        c(
            "queue.max",
            F::Queue,
            "200 characters, padded with two-byte characters",
            Sent::Queue(QueueShape::Length(200, 'é')),
            Stored,
        ),
        c(
            "queue.over_max",
            F::Queue,
            "201 characters: refused by released validation",
            Sent::Queue(QueueShape::Length(201, 'q')),
            Refused(RELEASED_CHECK),
        ),
        // priority: 1..=4.
        c(
            "priority.min",
            F::Priority,
            "1, the lowest valid",
            Sent::Priority(1),
            Stored,
        ),
        c(
            "priority.max",
            F::Priority,
            "4, the highest valid",
            Sent::Priority(4),
            Stored,
        ),
        c(
            "priority.below",
            F::Priority,
            "0, just below the range: refused",
            Sent::Priority(0),
            Refused(RELEASED_CHECK),
        ),
        c(
            "priority.above",
            F::Priority,
            "5, just above the range: refused",
            Sent::Priority(5),
            Refused(RELEASED_CHECK),
        ),
        // max_attempts: 1..=1000.
        c(
            "max_attempts.min",
            F::MaxAttempts,
            "1, the lowest valid",
            Sent::MaxAttempts(1),
            Stored,
        ),
        c(
            "max_attempts.max",
            F::MaxAttempts,
            "1000, the highest valid",
            Sent::MaxAttempts(1000),
            Stored,
        ),
        c(
            "max_attempts.below",
            F::MaxAttempts,
            "0, just below the range: refused",
            Sent::MaxAttempts(0),
            Refused(RELEASED_CHECK),
        ),
        c(
            "max_attempts.above",
            F::MaxAttempts,
            "1001, just above the range: refused",
            Sent::MaxAttempts(1001),
            Refused(RELEASED_CHECK),
        ),
        // run_at: an instant, to the microsecond, whatever offset it is written with.
        c(
            "run_at.utc",
            F::RunAt,
            "UTC written as Z, whole seconds",
            Sent::RunAt("2030-01-02T03:04:05Z"),
            Stored,
        ),
        c(
            "run_at.offset_half_hour",
            F::RunAt,
            "a +05:30 offset (not a whole hour) and microseconds",
            Sent::RunAt(exercise::RUN_AT),
            Stored,
        ),
        c(
            "run_at.offset_negative",
            F::RunAt,
            "a -09:30 offset across midnight and the year's end",
            Sent::RunAt("2030-12-31T23:59:59.999999-09:30"),
            Stored,
        ),
        c(
            "run_at.microsecond",
            F::RunAt,
            "one microsecond past the second: the stored precision",
            Sent::RunAt("2030-01-01T00:00:00.000001Z"),
            Stored,
        ),
        c(
            "run_at.past",
            F::RunAt,
            "an instant in the past: stored as asked, state scheduled",
            Sent::RunAt("2001-02-03T04:05:06.5Z"),
            Stored,
        ),
        c(
            "run_at.far_future",
            F::RunAt,
            "the last microsecond of year 9999 (a float epoch loses it)",
            Sent::RunAt("9999-12-31T23:59:59.999999Z"),
            Stored,
        ),
        // tags: at most 20 texts, in order, duplicates kept.
        c(
            "tags.none",
            F::Tags,
            "no tags: stored as an empty array",
            Sent::Tags(Vec::new()),
            Stored,
        ),
        c(
            "tags.one",
            F::Tags,
            "one tag",
            Sent::Tags(tags(&["solo"])),
            Stored,
        ),
        c(
            "tags.unsorted",
            F::Tags,
            "out of sorted order, non-ASCII, outside the BMP: kept in order",
            Sent::Tags(tags(&exercise::TAGS)),
            Stored,
        ),
        c(
            "tags.duplicates",
            F::Tags,
            "a tag three times: no de-duplication",
            Sent::Tags(tags(&["dup", "dup", "other", "dup"])),
            Stored,
        ),
        c(
            "tags.blank",
            F::Tags,
            "an empty tag and a space: kept",
            Sent::Tags(tags(&["", " ", "x"])),
            Stored,
        ),
        c(
            "tags.normalisation",
            F::Tags,
            "the same word in NFD and NFC: two tags, neither normalised",
            Sent::Tags(tags(&["Cafe\u{301}", "Caf\u{e9}"])),
            Stored,
        ),
        c(
            "tags.max",
            F::Tags,
            "20 tags, the most allowed",
            Sent::Tags((1..=20).map(|i| format!("t{i:02}")).collect()),
            Stored,
        ),
        c(
            "tags.over_max",
            F::Tags,
            "21 tags: refused by released validation",
            Sent::Tags((1..=21).map(|i| format!("t{i:02}")).collect()),
            Refused(RELEASED_CHECK),
        ),
        // metadata: a JSON object, stored as jsonb makes it.
        c(
            "metadata.empty",
            F::Metadata,
            "an empty object: stored as {}, nothing added",
            Sent::Metadata(json!({"type": "object", "value": []})),
            Stored,
        ),
        c(
            "metadata.mixed",
            F::Metadata,
            "a null member, an integer beyond i64, a float, non-ASCII with U+2028",
            Sent::Metadata(json!({"type": "object", "value": [
                ["source", s("awa-conformance")],
                ["nothing", {"type": "null"}],
                ["big", {"type": "int", "value": "18446744073709551615"}],
                ["ratio", {"type": "float", "value": "1.5", "bits": "3ff8000000000000"}],
                ["note", s("ünï \u{2028}")]
            ]})),
            Stored,
        ),
        c(
            "metadata.nested",
            F::Metadata,
            "nested objects and arrays with a null deep inside and empty containers",
            Sent::Metadata(json!({"type": "object", "value": [
                ["outer", {"type": "object", "value": [
                    ["inner", {"type": "array", "value": [
                        {"type": "int", "value": "1"},
                        {"type": "object", "value": [["deep", {"type": "null"}]]}
                    ]}],
                    ["empty", {"type": "object", "value": []}]
                ]}],
                ["list", {"type": "array", "value": []}],
                ["flag", {"type": "bool", "value": false}]
            ]})),
            Stored,
        ),
        c(
            "metadata.key_order",
            F::Metadata,
            "keys differing only in case, of several lengths and scripts: none lost",
            Sent::Metadata(json!({"type": "object", "value": [
                ["bb", {"type": "int", "value": "1"}],
                ["a", {"type": "int", "value": "2"}],
                ["ключ", s("значение")],
                ["A", {"type": "int", "value": "3"}]
            ]})),
            Stored,
        ),
    ]
}

/// The class with this ID.
#[must_use]
pub fn class(id: &str) -> Option<Class> {
    classes().into_iter().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_name_their_field() {
        let all = classes();
        let mut ids: Vec<&str> = all.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all.len(), "a class ID is used twice");
        for c in &all {
            assert!(
                c.id.starts_with(&format!("{}.", c.field.name())),
                "{} is not under its field {}",
                c.id,
                c.field.name()
            );
            let fits = matches!(
                (c.field, &c.sent),
                (Field::Kind, Sent::Kind(_))
                    | (Field::Queue, Sent::Queue(_))
                    | (Field::Priority, Sent::Priority(_))
                    | (Field::MaxAttempts, Sent::MaxAttempts(_))
                    | (Field::RunAt, Sent::RunAt(_))
                    | (Field::Tags, Sent::Tags(_))
                    | (Field::Metadata, Sent::Metadata(_))
            );
            assert!(fits, "{} sends a value of another field", c.id);
        }
    }

    #[test]
    fn every_field_has_a_stored_class_and_the_bounded_ones_a_refused_one() {
        let all = classes();
        for f in [
            Field::Kind,
            Field::Queue,
            Field::Priority,
            Field::MaxAttempts,
            Field::RunAt,
            Field::Tags,
            Field::Metadata,
        ] {
            assert!(all
                .iter()
                .any(|c| c.field == f && c.expect == Expect::Stored));
        }
        for f in [
            Field::Kind,
            Field::Queue,
            Field::Priority,
            Field::MaxAttempts,
            Field::Tags,
        ] {
            assert!(
                all.iter()
                    .any(|c| c.field == f && c.expect == Expect::Refused(RELEASED_CHECK)),
                "{} has no class just outside its range",
                f.name()
            );
        }
    }

    #[test]
    fn lengths_sit_exactly_on_the_edges() {
        let kinds: Vec<usize> = classes()
            .iter()
            .filter_map(|c| match &c.sent {
                Sent::Kind(k) if c.id.ends_with("max") => Some(k.chars().count()),
                _ => None,
            })
            .collect();
        assert_eq!(kinds, [200, 201]);
        assert_eq!(
            QueueShape::Length(200, 'é').queue("abc").chars().count(),
            200
        );
        assert_eq!(
            QueueShape::Length(201, 'q').queue("abc").chars().count(),
            201
        );
        assert_eq!(QueueShape::Suffix("_x").queue("abc"), "abc_x");
    }

    #[test]
    fn every_metadata_class_has_its_text() {
        for c in classes().iter().filter(|c| c.field == Field::Metadata) {
            let text = c.metadata_text().unwrap_or_default();
            assert!(text.starts_with('{'), "{}: {text:?}", c.id);
        }
        assert_eq!(
            class("metadata.empty").and_then(|c| c.metadata_text()),
            Some("{}".to_owned())
        );
    }

    #[test]
    fn a_class_binds_the_same_call_through_the_request_as_applied_to_the_call() {
        // The two ways a class reaches the database (a producer's request converted by the
        // one conversion, and the SQL engines' own call) must bind the same parameters.
        let plain = Job::plain(
            KIND,
            "awa_conformance_0_q",
            json!({"type": "object", "value": []}),
        );
        for c in classes() {
            let mut job = plain.clone();
            c.apply(&mut job);
            let mut call = InsertJob::of_job(&plain).unwrap_or_else(|e| panic!("{e}"));
            c.apply_call(&mut call);
            assert_eq!(InsertJob::of_job(&job), Ok(call), "{}", c.id);
        }
    }
}
