//! A crate whose user guide is an mdBook in `docs/`.
