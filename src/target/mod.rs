//! target stage (not built yet).
