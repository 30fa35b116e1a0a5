//! Which changed files a reviewer should see first when not all of them fit: the source the
//! change is about, then its tests, then documentation, then what a reviewer rarely reads line by
//! line (generated code, lock files, vendored dependencies).
//!
//! Decided from the path alone, with the conventions of the common ecosystems (and of GitHub's
//! linguist, which uses the same names). The path comes from the change, so a file can make
//! itself look vendored; that only moves it down the list, it never hides it: whatever is left
//! out is named in the brief with its counts.

use serde::Serialize;

/// How relevant a changed file is to a reviewer, most relevant first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Relevance {
    Source,
    Test,
    Docs,
    Generated,
    Lock,
    Vendored,
}

impl Relevance {
    /// Every kind, most relevant first.
    pub const ALL: [Relevance; 6] = [
        Relevance::Source,
        Relevance::Test,
        Relevance::Docs,
        Relevance::Generated,
        Relevance::Lock,
        Relevance::Vendored,
    ];

    /// How the brief names the kind: "source", "test", ...
    pub fn noun(self) -> &'static str {
        match self {
            Relevance::Source => "source",
            Relevance::Test => "test",
            Relevance::Docs => "documentation",
            Relevance::Generated => "generated",
            Relevance::Lock => "lock",
            Relevance::Vendored => "vendored",
        }
    }
}

const VENDOR_DIRS: &[&str] = &[
    "vendor",
    "vendored",
    "third_party",
    "third-party",
    "thirdparty",
    "node_modules",
    "bower_components",
    "Pods",
    "Carthage",
    ".yarn",
];

const LOCK_FILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "Gemfile.lock",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "pdm.lock",
    "composer.lock",
    "go.sum",
    "go.work.sum",
    "flake.lock",
    "mix.lock",
    "pubspec.lock",
    "Podfile.lock",
    "Package.resolved",
    "packages.lock.json",
    "gradle.lockfile",
    "conan.lock",
    "MODULE.bazel.lock",
];

const GENERATED_DIRS: &[&str] = &["dist", "__generated__", "generated", "gen", "__snapshots__"];

const GENERATED_SUFFIXES: &[&str] = &[
    ".min.js",
    ".min.css",
    ".js.map",
    ".css.map",
    ".pb.go",
    ".pb.cc",
    ".pb.h",
    "_pb2.py",
    "_pb2_grpc.py",
    ".pb.swift",
    "_grpc.pb.go",
    ".g.dart",
    ".freezed.dart",
    ".designer.cs",
    ".generated.ts",
    ".generated.go",
    ".generated.cs",
    "_generated.go",
    "_generated.rs",
    ".snap",
];

const TEST_DIRS: &[&str] = &[
    "test",
    "tests",
    "__tests__",
    "spec",
    "specs",
    "testdata",
    "test_data",
    "testing",
    "fixtures",
    "e2e",
];

const DOC_DIRS: &[&str] = &["doc", "docs", "documentation"];
const DOC_SUFFIXES: &[&str] = &[".md", ".rst", ".adoc", ".txt", ".markdown"];

/// The relevance of a changed file, from its path.
pub fn classify(path: &str) -> Relevance {
    let parts: Vec<&str> = path.split('/').collect();
    let (name, dirs) = parts.split_last().unwrap_or((&"", &[]));
    let name_lower = name.to_ascii_lowercase();
    let in_dir = |set: &[&str]| dirs.iter().any(|d| set.contains(d));

    if in_dir(VENDOR_DIRS) {
        return Relevance::Vendored;
    }
    if LOCK_FILES.contains(name) || name_lower.ends_with(".lock") {
        return Relevance::Lock;
    }
    if in_dir(GENERATED_DIRS)
        || GENERATED_SUFFIXES.iter().any(|s| name_lower.ends_with(s))
        || name_lower.starts_with("zz_generated")
    {
        return Relevance::Generated;
    }
    if in_dir(TEST_DIRS) || is_test_name(name, &name_lower) {
        return Relevance::Test;
    }
    if in_dir(DOC_DIRS) || DOC_SUFFIXES.iter().any(|s| name_lower.ends_with(s)) {
        return Relevance::Docs;
    }
    Relevance::Source
}

/// Test files by their own name: `x_test.go`, `test_x.py`, `x.test.ts`, `x.spec.js`,
/// `XTest.java`, `XTests.cs`, `x_spec.rb`.
fn is_test_name(name: &str, lower: &str) -> bool {
    let stem = lower.rsplit_once('.').map_or(lower, |(s, _)| s);
    let original_stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.starts_with("test_")
        || stem.ends_with(".test")
        || stem.ends_with(".spec")
        || stem.ends_with("_spec")
        || original_stem.ends_with("Test")
        || original_stem.ends_with("Tests")
}

/// The order to show `paths` in: by relevance, and within one kind in the order given (git's,
/// by path). Returns indices into `paths`.
pub fn order<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<(usize, Relevance)> {
    let mut ranked: Vec<(usize, Relevance)> = paths
        .into_iter()
        .enumerate()
        .map(|(i, p)| (i, classify(p)))
        .collect();
    ranked.sort_by_key(|&(i, r)| (r, i));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_ranked_by_what_a_reviewer_reads_first() {
        for (path, want) in [
            ("src/app.rs", Relevance::Source),
            ("cmd/main.go", Relevance::Source),
            ("Makefile", Relevance::Source),
            ("src/app_test.go", Relevance::Test),
            ("tests/integration/run.rs", Relevance::Test),
            ("pkg/test_parse.py", Relevance::Test),
            ("web/button.test.tsx", Relevance::Test),
            ("src/main/java/FooTest.java", Relevance::Test),
            ("README.md", Relevance::Docs),
            ("docs/guide/index.html", Relevance::Docs),
            ("api/v1/types.pb.go", Relevance::Generated),
            ("pkg/apis/zz_generated.deepcopy.go", Relevance::Generated),
            ("web/dist/app.min.js", Relevance::Generated),
            ("Cargo.lock", Relevance::Lock),
            ("web/package-lock.json", Relevance::Lock),
            ("go.sum", Relevance::Lock),
            ("vendor/github.com/x/y/z.go", Relevance::Vendored),
            ("web/node_modules/left-pad/index.js", Relevance::Vendored),
            ("third_party/zlib/inflate.c", Relevance::Vendored),
            ("contest/solver.rs", Relevance::Source),
            ("latest.rs", Relevance::Source),
        ] {
            assert_eq!(classify(path), want, "{path}");
        }
    }

    #[test]
    fn order_is_by_relevance_then_given_order() {
        let paths = ["go.sum", "b_test.go", "a.go", "vendor/x.go", "c.go"];
        let got: Vec<usize> = order(paths).into_iter().map(|(i, _)| i).collect();
        assert_eq!(got, [2, 4, 1, 0, 3]);
    }
}
