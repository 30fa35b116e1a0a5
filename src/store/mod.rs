//! store stage (not built yet).
