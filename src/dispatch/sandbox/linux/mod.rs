//! The Linux layers: bubblewrap's namespaces ([`bwrap`]), Landlock ([`landlock`]) applied by
//! deep-review's helper inside bwrap ([`inner`]) or in the child without it, and what the child
//! does between `fork` and `exec` on Linux ([`child`]). Fenced with `cfg(target_os = "linux")`
//! by the parent module.

pub mod bwrap;
pub mod child;
pub mod identity;
pub mod inner;
pub mod landlock;
pub mod launch;
