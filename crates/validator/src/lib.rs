//! troupe-validator
