//! The suites: each builds trials (one case = one libtest-mimic trial) and nothing else.
//!
//! Which trials run, against which database, and what the run concluded is decided by the
//! `run` action ([`crate::run`]); the adapter's trials are built by [`crate::adapter`].

pub mod db;
pub mod offline;
