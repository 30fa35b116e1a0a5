//! dispatch stage (not built yet).
