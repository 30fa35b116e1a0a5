//! Report stage: [`Report`](crate::model::Report) → Markdown (the reference layout) and JSON.
