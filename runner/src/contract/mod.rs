//! The contract layer: what a vector means at the database and whether an answer is right,
//! decided once, below every engine.
//!
//! Ordered bottom-up; a module uses only those above it in this list, and nothing in here
//! uses the engines (`suites`, `producer`, `fuzz`, `adapter`) or the command line:
//!
//! 1. the database under test: [`target`] (the checked session, [`target::preflight`]),
//!    [`environment`], [`preflight`] (the catalog checks every case depends on),
//!    [`released`] (released-Awa detection), [`levels`] (capabilities and conformance
//!    levels), [`login`] (the run's login role), [`sweep`] (what a run committed);
//! 2. [`call`]: one builder, binder and decoder for every contract function the kit calls;
//! 3. [`expect`]: the one mapping from a vector (and width) to what the stored job must be;
//! 4. [`judge`]: the one comparison, with layers, near misses, refusals and the
//!    harness-error rule.
//!
//! A check is a request ([`call`]) plus an expectation ([`expect`]), and [`judge`] decides.

pub mod call;
pub mod environment;
pub mod expect;
pub mod judge;
pub mod levels;
pub mod login;
pub mod preflight;
pub mod released;
pub mod sweep;
pub mod target;
