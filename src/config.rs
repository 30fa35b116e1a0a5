//! Configuration (not built yet).
