//! The contract layer: what a vector means at the database and whether an answer is right,
//! decided once, below every engine (ADR 0051).
//!
//! Ordered bottom-up; a module uses only those before it in this list, and nothing in here
//! uses the engines (`suites`, `producer`, `fuzz`, `adapter`) or the command line:
//!
//! 1. the database under test: [`released`] (released-Awa detection), [`environment`] (can
//!    the database host a run), [`target`] (the checked session [`target::DbSetup`]),
//!    [`sweep`] (what a run committed, and the job rows a check left), [`login`] (the run's
//!    login role), [`preflight`] (the catalog checks every case depends on), [`levels`]
//!    (capabilities and conformance levels), and [`open`], the one way to get a checked
//!    session ([`open::preflight`]);
//! 2. [`call`]: one builder, binder and decoder for every contract function the kit calls,
//!    and the decoded job the judge compares ([`call::Observed`]);
//! 3. [`expect`]: the one mapping from a vector (and width) to what the stored job must be,
//!    and [`space`], each request field's input classes and what each must become;
//! 4. [`judge`]: the one comparison, with layers, near misses, the row count, refusals and
//!    the harness-error rule;
//! 5. [`features`]: the producer features a verdict names, the mandatory core, and the rule
//!    from what happened to each case to what a run may claim (pure; ADR 0062).
//!
//! A check is a request ([`call`]) plus an expectation ([`expect`]), and [`judge`] decides.

pub mod call;
pub mod environment;
pub mod expect;
pub mod features;
pub mod judge;
pub mod levels;
pub mod login;
pub mod open;
pub mod preflight;
pub mod released;
pub mod server;
pub mod space;
#[cfg(test)]
mod space_doc;
pub mod sweep;
pub mod target;
