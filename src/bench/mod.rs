//! bench stage (not built yet).
