//! brief stage (not built yet).
