//! Consolidate stage: verified reviews → one [`Report`](crate::model::Report), in code.
