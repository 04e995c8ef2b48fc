//! The features a verdict names, which of them make up the mandatory core of each side, and
//! the one rule from what happened to each case to what a run may claim (docs/contract.md,
//! "Features"; ADR 0062). A producer's cases, an adapter's vectors ([`Feature::of_vector`]) and
//! a database's `sql::` cases are judged by the same rule; only which features are mandatory
//! depends on the [`Side`] (a database's core is its routing, its refusals and its catalog; a
//! producer's is its routing and the stored job).
//!
//! Why features and not capabilities: a capability (`enqueue`, `errors`, `bulk`) is what a
//! producer says it does; a feature is what a case checks. A producer that declares `enqueue`
//! and skips every concurrency-key request declares the right capability and checks nothing
//! of ADR-033's concurrency-key routing, and only a per-feature count can say so.
//!
//! The rule, in full:
//! - a case the producer **skipped** (it answered `skipped`) of a mandatory feature fails the
//!   run, naming the feature and the count: the core is what every producer must do;
//! - a feature is **checked** only when every case of it in the kit ran (passed or not);
//!   one skipped, not applicable (the target or the producer's protocol cannot express it, a
//!   capability not declared), errored or not selected by a filter leaves it "not checked",
//!   named with its counts;
//! - the mandatory features, all checked, are named together as `core`.
//!
//! Pure: counts in, words out. The CLI's report, the Python bindings' report, the badge and
//! the page all call it, so none of them can claim more than another.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One producer feature: what a group of cases checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    /// An ordering key routes the job to its enqueue shard (released Awa, ADR-033).
    OrderingKey,
    /// A concurrency key: its digest, computed in PostgreSQL, and its shard (ADR-033).
    ConcurrencyKey,
    /// Both keys (the ordering key wins) and neither (the rotor): routing precedence.
    Precedence,
    /// The stored job is the job asked for: kind, args, tags, metadata, attempts, run_at.
    Payload,
    /// The unique key, its states and the claim that refuses a duplicate.
    Uniqueness,
    /// A PartitionedQueue's physical queue.
    Partitions,
    /// The requests the contract refuses (too long keys, bad unique states, duplicates).
    Refusals,
    /// Staged bulk batches (docs/contract.md §14).
    Bulk,
    /// A database only: the contract's functions as the catalog shows them (signatures,
    /// SECURITY DEFINER, search_path, bounded owner, grants, advertised capabilities) and the
    /// least-privilege producer role (docs/contract.md §12).
    Catalog,
    /// A database only: `move_shard` and the lifecycle of a job's shard.
    MoveShard,
}

/// Whose features a count is: what a producer (or an adapter, which computes what a producer
/// computes) checks, or what a database's `sql::` cases check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// A producer or an adapter: the `producer::` and `adapter::` cases.
    #[default]
    Producer,
    /// A database: the `sql::` cases.
    Database,
}

/// The suite every database case records (`sql::…`); [`Side::of_suite`] reads it.
pub const DATABASE_SUITE: &str = "sql";

impl Side {
    /// The side a case of `suite` belongs to.
    #[must_use]
    pub fn of_suite(suite: &str) -> Side {
        if suite == DATABASE_SUITE {
            Side::Database
        } else {
            Side::Producer
        }
    }
}

/// The name the mandatory features go by together when every one of them was checked.
pub const CORE: &str = "core";

impl Feature {
    /// Every feature, in the order reports list them (a side's mandatory ones are named
    /// together first, as `core`).
    pub const ALL: [Feature; 10] = [
        Feature::OrderingKey,
        Feature::ConcurrencyKey,
        Feature::Precedence,
        Feature::Payload,
        Feature::Uniqueness,
        Feature::Partitions,
        Feature::Refusals,
        Feature::Bulk,
        Feature::Catalog,
        Feature::MoveShard,
    ];

    /// The stable name in every report (`concurrency-key`).
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Feature::OrderingKey => "ordering-key",
            Feature::ConcurrencyKey => "concurrency-key",
            Feature::Precedence => "precedence",
            Feature::Payload => "payload",
            Feature::Uniqueness => "uniqueness",
            Feature::Partitions => "partitions",
            Feature::Refusals => "refusals",
            Feature::Bulk => "bulk",
            Feature::Catalog => "catalog",
            Feature::MoveShard => "move-shard",
        }
    }

    /// The feature named `id`, if there is one.
    #[must_use]
    pub fn from_id(id: &str) -> Option<Feature> {
        Feature::ALL.into_iter().find(|f| f.id() == id)
    }

    /// What an adapter's vector of `family` checks (the same rule judges adapters, ADR 0062):
    /// a vector whose expected answer is an error checks the refusal; `move_shard` is a
    /// database operation no producer performs, so its vectors carry no feature.
    #[must_use]
    pub fn of_vector(family: awa_conformance_vectors::Family, refused: bool) -> Option<Feature> {
        use awa_conformance_vectors::Family as F;
        if refused {
            return Some(Feature::Refusals);
        }
        match family {
            F::OrderingShard => Some(Feature::OrderingKey),
            F::ConcurrencyDigest | F::ConcurrencyShard => Some(Feature::ConcurrencyKey),
            F::RoutingPrecedence => Some(Feature::Precedence),
            // The args' canonical JSON is hashed into the unique key.
            F::CanonicalJson | F::UniqueKey | F::UniqueStates => Some(Feature::Uniqueness),
            F::Partition => Some(Feature::Partitions),
            F::MoveShard => None,
        }
    }

    /// Whether every implementation of `side` must do it. Every producer: ADR-033's routing
    /// and the stored job. Every database: ADR-033's routing, the stable refusals and the
    /// catalog (docs/contract.md §12's core); the stored job is the optional `payload` level
    /// (revision 1.2's `job_stored`).
    #[must_use]
    pub fn mandatory(self, side: Side) -> bool {
        match side {
            Side::Producer => matches!(
                self,
                Feature::OrderingKey
                    | Feature::ConcurrencyKey
                    | Feature::Precedence
                    | Feature::Payload
            ),
            Side::Database => matches!(
                self,
                Feature::OrderingKey
                    | Feature::ConcurrencyKey
                    | Feature::Precedence
                    | Feature::Refusals
                    | Feature::Catalog
            ),
        }
    }
}

/// What happened to one case of the kit's catalogue in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It ran and was judged (passed, failed, or an expected failure either way).
    Checked,
    /// The producer answered `skipped`.
    Skipped,
    /// It was never sent: the target, the producer's protocol or its capabilities rule it
    /// out.
    NotApplicable,
    /// It was not run: there was no database (counted as not applicable; a side whose every
    /// case was ignored was never reached, [`Coverage::reached`]).
    Ignored,
    /// The harness could not finish it.
    Errored,
}

/// The counts of one feature in a run; what is not counted was not selected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// The kit's cases of the feature (whether selected or not).
    pub cases: u64,
    /// Cases that ran and were judged.
    pub checked: u64,
    /// Cases the producer skipped.
    pub skipped: u64,
    /// Cases never sent (see [`Fate::NotApplicable`]).
    pub not_applicable: u64,
    /// Cases the harness could not finish.
    pub errored: u64,
}

impl Tally {
    /// Cases a filter left out.
    #[must_use]
    pub fn not_selected(&self) -> u64 {
        self.cases
            .saturating_sub(self.checked + self.skipped + self.not_applicable + self.errored)
    }

    /// Every case of the feature ran and was judged.
    #[must_use]
    pub fn whole(&self) -> bool {
        self.cases > 0 && self.checked >= self.cases
    }

    /// Why the feature is not checked, e.g. `6 of 13 skipped`, or
    /// `6 skipped, 2 not applicable, of 13`.
    fn why_not(&self) -> String {
        let parts: Vec<String> = [
            (self.skipped, "skipped"),
            (self.not_applicable, "not applicable"),
            (self.errored, "errored"),
            (self.not_selected(), "not selected"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        match parts.as_slice() {
            [one] => {
                let (n, what) = one.split_once(' ').unwrap_or((one, ""));
                format!("{n} of {} {what}", self.cases)
            }
            _ => format!("{}, of {}", parts.join(", "), self.cases),
        }
    }
}

/// One row of the JSON report's `features.rows` (and `database_features.rows`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureRow {
    /// [`Feature::id`].
    pub feature: String,
    /// [`Feature::mandatory`] on the section's side.
    pub mandatory: bool,
    /// The counts.
    #[serde(flatten)]
    pub tally: Tally,
    /// Every case of it ran and was judged.
    pub checked_whole: bool,
}

/// The per-feature counts of one side of a run, and what they let it claim.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    side: Side,
    tallies: BTreeMap<Feature, Tally>,
    /// Whether a case was added that was not ignored.
    reached: bool,
}

impl Coverage {
    /// The coverage of a run whose catalogue (every case the kit has, selected or not) holds
    /// these cases, each given by its features; nothing has happened yet.
    pub fn of_catalogue<'a>(side: Side, cases: impl IntoIterator<Item = &'a [Feature]>) -> Self {
        let mut tallies = BTreeMap::new();
        for features in cases {
            for f in features {
                tallies.entry(*f).or_insert_with(Tally::default).cases += 1;
            }
        }
        Self {
            side,
            tallies,
            reached: false,
        }
    }

    /// The coverage with the catalogue counts of a report's rows (`features.rows`), unknown
    /// feature names ignored: what happened is then counted from the report's cases.
    #[must_use]
    pub fn of_rows(side: Side, rows: &[FeatureRow]) -> Self {
        let tallies = rows
            .iter()
            .filter_map(|r| {
                Feature::from_id(&r.feature).map(|f| {
                    (
                        f,
                        Tally {
                            cases: r.tally.cases,
                            ..Tally::default()
                        },
                    )
                })
            })
            .collect();
        Self {
            side,
            tallies,
            reached: false,
        }
    }

    /// The side these counts are of.
    #[must_use]
    pub fn side(&self) -> Side {
        self.side
    }

    /// Whether the run had any featured case of this side at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tallies.is_empty()
    }

    /// Whether the side was reached: one of its cases was added and not ignored. A run
    /// without a database ignores every `sql::` case and says nothing of the database's
    /// features (the run's report and the page both ask this).
    #[must_use]
    pub fn reached(&self) -> bool {
        self.reached
    }

    /// Count what happened to one case of these features.
    pub fn add(&mut self, features: &[Feature], fate: Fate) {
        self.reached |= fate != Fate::Ignored;
        for f in features {
            let t = self.tallies.entry(*f).or_default();
            // A case outside the catalogue (another kit's report) still counts as one.
            t.cases = t
                .cases
                .max(t.checked + t.skipped + t.not_applicable + t.errored + 1);
            match fate {
                Fate::Checked => t.checked += 1,
                Fate::Skipped => t.skipped += 1,
                Fate::NotApplicable | Fate::Ignored => t.not_applicable += 1,
                Fate::Errored => t.errored += 1,
            }
        }
    }

    /// What the run checked, and what it did not, in one line:
    /// `core, uniqueness; bulk not checked (6 of 13 skipped)`.
    #[must_use]
    pub fn summary(&self) -> String {
        self.line(true)
    }

    /// The same line without the counts (`core, uniqueness; bulk not checked`): what a run
    /// may claim, for documents that must not move when the vectors grow
    /// (docs/compatibility.md).
    #[must_use]
    pub fn claims(&self) -> String {
        self.line(false)
    }

    fn line(&self, counts: bool) -> String {
        let mandatory_whole = Feature::ALL
            .iter()
            .filter(|f| f.mandatory(self.side))
            .all(|f| self.tallies.get(f).is_some_and(Tally::whole));
        let mut checked = Vec::new();
        let mut not = Vec::new();
        if mandatory_whole {
            checked.push(CORE.to_owned());
        }
        for f in Feature::ALL {
            if f.mandatory(self.side) && mandatory_whole {
                continue;
            }
            match self.tallies.get(&f) {
                Some(t) if t.whole() => checked.push(f.id().to_owned()),
                Some(t) if counts => {
                    not.push(format!("{} not checked ({})", f.id(), t.why_not()));
                }
                None if f.mandatory(self.side) && counts => {
                    not.push(format!("{} not checked (no case)", f.id()));
                }
                Some(_) => not.push(format!("{} not checked", f.id())),
                None if f.mandatory(self.side) => not.push(format!("{} not checked", f.id())),
                None => {}
            }
        }
        let checked = if checked.is_empty() {
            "no feature checked whole".to_owned()
        } else {
            checked.join(", ")
        };
        if not.is_empty() {
            checked
        } else {
            format!("{checked}; {}", not.join(", "))
        }
    }

    /// Whether every mandatory feature was checked whole.
    #[must_use]
    pub fn core_checked(&self) -> bool {
        Feature::ALL
            .iter()
            .filter(|f| f.mandatory(self.side))
            .all(|f| self.tallies.get(f).is_some_and(Tally::whole))
    }

    /// The finding when the producer skipped a case of a mandatory feature: the features and
    /// counts, and the fix. `None` when it skipped none.
    #[must_use]
    pub fn mandatory_skips(&self) -> Option<String> {
        let skipped: Vec<String> = self
            .tallies
            .iter()
            .filter(|(f, t)| f.mandatory(self.side) && t.skipped > 0)
            .map(|(f, t)| format!("{} ({} of {} cases)", f.id(), t.skipped, t.cases))
            .collect();
        (!skipped.is_empty()).then(|| {
            format!(
                "the implementation skipped cases of mandatory features: {}; every producer \
                 and adapter must answer every case of the core (docs/contract.md, \"Features\"): \
                 implement them",
                skipped.join(", ")
            )
        })
    }

    /// The rows of the JSON report, in [`Feature::ALL`] order.
    #[must_use]
    pub fn rows(&self) -> Vec<FeatureRow> {
        Feature::ALL
            .into_iter()
            .filter_map(|f| {
                self.tallies.get(&f).map(|t| FeatureRow {
                    feature: f.id().to_owned(),
                    mandatory: f.mandatory(self.side),
                    tally: *t,
                    checked_whole: t.whole(),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Feature::*;

    /// A catalogue of `n` cases of each feature.
    fn catalogue(rows: &[(Feature, usize)]) -> Coverage {
        let cases: Vec<Vec<Feature>> = rows
            .iter()
            .flat_map(|(f, n)| std::iter::repeat_n(vec![*f], *n))
            .collect();
        Coverage::of_catalogue(Side::Producer, cases.iter().map(Vec::as_slice))
    }

    #[test]
    fn a_side_whose_every_case_was_ignored_was_not_reached() {
        let mut c = Coverage::of_catalogue(Side::Database, [&[Feature::Catalog][..]]);
        c.add(&[Feature::Catalog], Fate::Ignored);
        assert!(!c.reached());
        assert_eq!(c.rows().first().map(|r| r.tally.not_applicable), Some(1));
        c.add(&[], Fate::NotApplicable);
        assert!(c.reached());
    }

    fn full() -> Coverage {
        catalogue(&[
            (OrderingKey, 2),
            (ConcurrencyKey, 2),
            (Precedence, 2),
            (Payload, 2),
            (Uniqueness, 3),
            (Bulk, 13),
        ])
    }

    fn run(c: &mut Coverage, f: Feature, fate: Fate, n: usize) {
        for _ in 0..n {
            c.add(&[f], fate);
        }
    }

    fn core_checked(c: &mut Coverage) {
        for f in [OrderingKey, ConcurrencyKey, Precedence, Payload] {
            run(c, f, Fate::Checked, 2);
        }
    }

    #[test]
    fn the_core_is_named_together_and_a_part_skipped_optional_feature_is_not_checked() {
        let mut c = full();
        core_checked(&mut c);
        run(&mut c, Uniqueness, Fate::Checked, 3);
        run(&mut c, Bulk, Fate::Checked, 7);
        run(&mut c, Bulk, Fate::Skipped, 6);
        assert_eq!(
            c.summary(),
            "core, uniqueness; bulk not checked (6 of 13 skipped)"
        );
        assert!(c.core_checked());
        assert_eq!(c.mandatory_skips(), None);
    }

    #[test]
    fn a_skipped_mandatory_case_is_a_finding_with_the_feature_and_count() {
        let mut c = full();
        for f in [OrderingKey, Precedence, Payload] {
            run(&mut c, f, Fate::Checked, 2);
        }
        c.add(&[ConcurrencyKey], Fate::Checked);
        c.add(&[ConcurrencyKey], Fate::Skipped);
        let finding = c.mandatory_skips().unwrap();
        assert!(
            finding.contains("mandatory features: concurrency-key (1 of 2 cases)"),
            "{finding}"
        );
        assert!(!c.core_checked());
        // A case beyond the catalogue (another kit's report) is counted, never lost.
        c.add(&[ConcurrencyKey], Fate::Skipped);
        assert!(c.mandatory_skips().unwrap().contains("(2 of 3 cases)"));
    }

    #[test]
    fn not_applicable_and_unselected_cases_leave_the_core_unclaimed_without_a_finding() {
        let mut c = full();
        run(&mut c, OrderingKey, Fate::Checked, 2);
        run(&mut c, ConcurrencyKey, Fate::NotApplicable, 2);
        run(&mut c, Precedence, Fate::Checked, 2);
        run(&mut c, Payload, Fate::Checked, 1);
        run(&mut c, Uniqueness, Fate::Errored, 1);
        assert_eq!(c.mandatory_skips(), None);
        assert!(!c.core_checked());
        assert_eq!(
            c.summary(),
            "ordering-key, precedence; concurrency-key not checked (2 of 2 not applicable), \
             payload not checked (1 of 2 not selected), uniqueness not checked (1 errored, \
             2 not selected, of 3), bulk not checked (13 of 13 not selected)"
        );
        // The claims alone, as a document that must not move with the counts shows them.
        assert_eq!(
            c.claims(),
            "ordering-key, precedence; concurrency-key not checked, payload not checked, \
             uniqueness not checked, bulk not checked"
        );
    }

    #[test]
    fn a_run_without_a_mandatory_feature_in_its_catalogue_never_claims_the_core() {
        let mut c = catalogue(&[(Bulk, 1)]);
        c.add(&[Bulk], Fate::Checked);
        assert!(!c.core_checked());
        assert!(c
            .summary()
            .starts_with("bulk; ordering-key not checked (no case)"));
        assert_eq!(
            Coverage::default().summary(),
            "no feature checked whole; ordering-key not checked (no case), concurrency-key not \
             checked (no case), precedence not checked (no case), payload not checked (no case)"
        );
    }

    #[test]
    fn rows_round_trip_their_catalogue_and_ids_are_stable() {
        let mut c = full();
        core_checked(&mut c);
        let rows = c.rows();
        assert_eq!(rows[0].feature, "ordering-key");
        assert!(rows[0].mandatory && rows[0].checked_whole);
        let again = Coverage::of_rows(Side::Producer, &rows);
        assert_eq!(again.tallies[&Bulk].cases, 13);
        assert_eq!(again.tallies[&Bulk].checked, 0);
        for f in Feature::ALL {
            assert_eq!(Feature::from_id(f.id()), Some(f));
        }
        let json = serde_json::to_value(&rows[0]).unwrap();
        assert_eq!(json["not_applicable"], 0);
        assert_eq!(json["checked_whole"], true);
    }

    #[test]
    fn a_database_is_judged_by_the_same_rule_with_its_own_core() {
        let cases: Vec<Vec<Feature>> = [
            (OrderingKey, 2),
            (ConcurrencyKey, 2),
            (Precedence, 1),
            (Refusals, 3),
            (Catalog, 2),
            (Payload, 2),
            (MoveShard, 2),
        ]
        .iter()
        .flat_map(|(f, n)| std::iter::repeat_n(vec![*f], *n))
        .collect();
        let mut c = Coverage::of_catalogue(Side::Database, cases.iter().map(Vec::as_slice));
        for f in [OrderingKey, ConcurrencyKey, Precedence, Refusals, Catalog] {
            while !c.tallies[&f].whole() {
                c.add(&[f], Fate::Checked);
            }
        }
        run(&mut c, Payload, Fate::NotApplicable, 2);
        run(&mut c, MoveShard, Fate::Checked, 2);
        // The stored job is optional for a database, mandatory for a producer.
        assert!(c.core_checked());
        assert_eq!(
            c.summary(),
            "core, move-shard; payload not checked (2 of 2 not applicable)"
        );
        let rows = c.rows();
        assert!(rows.iter().any(|r| r.feature == "refusals" && r.mandatory));
        assert!(rows.iter().any(|r| r.feature == "payload" && !r.mandatory));
        // A catalog case not run leaves a database's core unclaimed.
        let mut d = Coverage::of_catalogue(Side::Database, cases.iter().map(Vec::as_slice));
        for f in [OrderingKey, ConcurrencyKey, Precedence, Refusals] {
            run(&mut d, f, Fate::Checked, 3);
        }
        assert!(!d.core_checked());
        assert!(
            d.summary().starts_with("ordering-key, concurrency-key"),
            "{}",
            d.summary()
        );
        assert_eq!(Side::of_suite(DATABASE_SUITE), Side::Database);
        assert_eq!(Side::of_suite("producer"), Side::Producer);
    }
}
