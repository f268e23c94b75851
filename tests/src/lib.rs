//! Cross-crate integration tests for the CANN crates; the tests are in
//! `tests/tests/`, helper programs in `src/bin/`.
