//! Frozen v1 vectors (placeholder until the loader lands).
