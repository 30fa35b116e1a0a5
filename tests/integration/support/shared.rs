//! `../shared`: data beside the project (the reference reports, the benchmark split), not part
//! of it. Tests that read it are `#[ignore = "needs ../shared ..."]`: they run only when asked
//! (`--run-ignored all`, as CI does), and then a missing folder fails them with its path.

use std::path::PathBuf;

/// `../shared/<sub>`, which must exist.
pub fn shared_dir(sub: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(sub);
    assert!(
        dir.is_dir(),
        "{} is missing: this test reads the data in ../shared (beside the project checkout)",
        dir.display()
    );
    dir
}
