//! Where a producer case's time goes (`--timings`): the engine adds up, per phase, the time
//! its cases spend, so that a slow run can be read as "the producer" or "the engine's own
//! round trips" from the report rather than guessed (issue 20 found the guess wrong).
//!
//! Phases, in a case's order: set-up (the global-key lock and the queue widths), reference
//! (`insert_job` in a rolled-back transaction, and what the server makes of the payload),
//! producer (the request and its answer), read-back (the stored job, the row count), judge
//! (the contract layer's comparisons), sweep (removing the case's rows). `other` is the rest
//! of a case's time inside the engine: planning, locks, the producer's stderr.

use std::time::Duration;

use serde::Serialize;

/// One phase of a producer case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The global-key lock and the queue widths.
    SetUp,
    /// The reference `insert_job` call (rolled back) and the payload as the server reads it.
    Reference,
    /// The producer's answer to a request.
    Producer,
    /// Reading the stored job back, and counting the case's rows.
    ReadBack,
    /// Judging what was read against the vector and the reference.
    Judge,
    /// Removing the case's rows.
    Sweep,
}

impl Phase {
    /// Every phase, in a case's order.
    pub const ALL: [Self; 6] = [
        Self::SetUp,
        Self::Reference,
        Self::Producer,
        Self::ReadBack,
        Self::Judge,
        Self::Sweep,
    ];

    /// The phase's name in the report.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::SetUp => "set_up",
            Self::Reference => "reference",
            Self::Producer => "producer",
            Self::ReadBack => "read_back",
            Self::Judge => "judge",
            Self::Sweep => "sweep",
        }
    }

    const fn index(self) -> usize {
        match self {
            Self::SetUp => 0,
            Self::Reference => 1,
            Self::Producer => 2,
            Self::ReadBack => 3,
            Self::Judge => 4,
            Self::Sweep => 5,
        }
    }
}

/// The time a session's cases spent, per phase (a fixed size: it does not grow with the
/// number of cases).
#[derive(Debug, Clone, Default)]
pub struct Timings {
    phases: [Duration; 6],
    cases: u64,
    in_cases: Duration,
}

impl Timings {
    /// Add `spent` to `phase`.
    pub fn add(&mut self, phase: Phase, spent: Duration) {
        if let Some(slot) = self.phases.get_mut(phase.index()) {
            *slot += spent;
        }
    }

    /// Count one case that took `spent` in all.
    pub fn case(&mut self, spent: Duration) {
        self.cases += 1;
        self.in_cases += spent;
    }

    /// Add what `other` counted (another lane's cases, ADR 0057).
    pub fn merge(&mut self, other: &Self) {
        for (mine, theirs) in self.phases.iter_mut().zip(other.phases) {
            *mine += theirs;
        }
        self.cases += other.cases;
        self.in_cases += other.in_cases;
    }

    /// The report section.
    #[must_use]
    pub fn section(&self) -> TimingsSection {
        let per_case = |d: Duration| match self.cases {
            0 => 0.0,
            n => ms(d) / n as f64,
        };
        let counted: Duration = self.phases.iter().sum();
        let mut phases: Vec<PhaseTime> = Phase::ALL
            .iter()
            .map(|p| {
                let d = self.phases.get(p.index()).copied().unwrap_or_default();
                PhaseTime {
                    phase: p.name(),
                    total_ms: ms(d),
                    per_case_ms: per_case(d),
                }
            })
            .collect();
        let other = self.in_cases.saturating_sub(counted);
        phases.push(PhaseTime {
            phase: "other",
            total_ms: ms(other),
            per_case_ms: per_case(other),
        });
        TimingsSection {
            engine: "producer",
            cases: self.cases,
            in_cases_ms: ms(self.in_cases),
            phases,
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The report's `timings` section (`--timings`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TimingsSection {
    /// The engine the times are of (`producer`).
    pub engine: &'static str,
    /// Cases counted.
    pub cases: u64,
    /// Their time in all, inside the engine.
    pub in_cases_ms: f64,
    /// Per phase, in a case's order, then `other`.
    pub phases: Vec<PhaseTime>,
}

/// One phase's time.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PhaseTime {
    /// The phase's name.
    pub phase: &'static str,
    /// Its time over every case.
    pub total_ms: f64,
    /// Its mean time per case.
    pub per_case_ms: f64,
}

impl TimingsSection {
    /// The table printed on stderr at the end of a `--timings` run.
    #[must_use]
    pub fn table(&self) -> String {
        let mut out = format!(
            "timings: {} producer cases, {:.2} s inside the engine ({:.2} ms per case)\n",
            self.cases,
            self.in_cases_ms / 1000.0,
            match self.cases {
                0 => 0.0,
                n => self.in_cases_ms / n as f64,
            }
        );
        for p in &self.phases {
            let share = match self.in_cases_ms {
                t if t > 0.0 => 100.0 * p.total_ms / t,
                _ => 0.0,
            };
            out.push_str(&format!(
                "  {:<10} {:>8.3} ms/case {:>5.1}%\n",
                p.phase, p.per_case_ms, share
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_of_a_case_is_other_and_means_are_per_case() {
        let mut t = Timings::default();
        t.add(Phase::Producer, Duration::from_millis(6));
        t.add(Phase::Sweep, Duration::from_millis(2));
        t.case(Duration::from_millis(10));
        t.case(Duration::from_millis(0));
        let s = t.section();
        assert_eq!(s.cases, 2);
        let get = |name: &str| s.phases.iter().find(|p| p.phase == name).cloned();
        assert_eq!(get("producer").map(|p| p.per_case_ms), Some(3.0));
        assert_eq!(get("sweep").map(|p| p.total_ms), Some(2.0));
        assert_eq!(get("other").map(|p| p.total_ms), Some(2.0));
        assert_eq!(get("set_up").map(|p| p.total_ms), Some(0.0));
        assert!(s.table().contains("producer"), "{}", s.table());
    }

    #[test]
    fn no_case_is_no_division_by_zero() {
        let s = Timings::default().section();
        assert_eq!(s.cases, 0);
        assert!(s.phases.iter().all(|p| p.per_case_ms == 0.0));
        assert_eq!(s.phases.len(), Phase::ALL.len() + 1);
    }
}
