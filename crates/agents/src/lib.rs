//! troupe-agents
