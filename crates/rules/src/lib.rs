//! troupe-rules
