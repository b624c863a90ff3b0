//! troupe-campaign
