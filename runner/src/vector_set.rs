//! Loading the vector set a command works on, verified: shared by `run` and the `vectors`
//! subcommands, below both, so neither has to reach into the other for it.

use std::path::Path;

use awa_conformance_vectors::{check_errata, check_ids, check_manifest, check_schema, VectorSet};

use crate::error::{Error, Kind};

/// Load the vector set (every embedded release, or `--vectors-dir`: a release directory with
/// the releases it extends, or the vectors root) and verify its integrity: JSON Schema, then
/// content IDs (so an edited vector is named), then the manifest hashes and pins, then errata.
pub fn load_vectors(dir: Option<&Path>) -> Result<(VectorSet, String), Error> {
    fn invalid(e: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::caused(Kind::VectorsInvalid, e)
    }
    let (set, source) = match dir {
        Some(dir) => (
            VectorSet::load_dir(dir).map_err(invalid)?,
            dir.display().to_string(),
        ),
        None => (
            awa_conformance_vectors::embedded().map_err(invalid)?,
            "embedded".to_owned(),
        ),
    };
    check_schema(&set).map_err(invalid)?;
    check_ids(&set).map_err(invalid)?;
    check_manifest(&set).map_err(invalid)?;
    check_errata(&set).map_err(invalid)?;
    Ok((set, source))
}
