//! awa-conformance runner (placeholder).
fn main() {}
