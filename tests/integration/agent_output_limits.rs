//! An agent that floods its output and writes terminal escape sequences: the flood is cut while
//! it streams (the run's memory stays bounded and the report records the cut), and the
//! sequences reach the terminal escaped, never acting on it.

use crate::support::standin::{Agents, repo, review, run};

/// The largest resident set of this process's waited-for children, in bytes.
fn children_max_rss() -> u64 {
    // SAFETY: getrusage fills the struct it is given; nothing else is touched.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    (usage.ru_maxrss as u64) * 1024
}

#[test]
fn a_flood_is_cut_and_escape_sequences_are_shown_escaped() {
    let repo = repo();
    let agents = Agents::new();
    let text = review("Login accepts any password", None);
    let file = agents.path("flood.md");
    std::fs::write(&file, &text).unwrap();
    // The review, then 200 MB more.
    agents.add(
        "flood",
        &format!(
            "cat '{}'\nyes 'filler line of an agent that does not stop' | head -c 200000000",
            file.display()
        ),
    );
    agents.add(
        "escaper",
        "printf 'key rejected \\033]52;c;aGVsbG8=\\007 \\033]0;pwned\\007 see docs\\n' >&2\nexit 2",
    );
    let ran = run(agents.cmd(repo.path()).args([
        "run",
        "--agents",
        "flood,escaper",
        "--quiet",
        "--format",
        "json",
    ]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);

    // The terminal saw the sequences written out, not sent.
    assert!(
        !ran.stderr.contains('\u{1b}') && !ran.stderr.contains('\u{7}'),
        "raw control characters reached the terminal: {:?}",
        ran.stderr
    );
    assert!(
        ran.stderr.contains("key rejected \\x1b]52;c;aGVsbG8=\\x07"),
        "{}",
        ran.stderr
    );

    // The flood was cut while it streamed; the report says so.
    let json_path = ran.stdout.lines().find(|l| l.ends_with(".json")).unwrap();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json_path).unwrap()).unwrap();
    let flood = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "flood")
        .unwrap();
    let cut = flood["output_cut_bytes"]
        .as_u64()
        .expect("the cut is recorded");
    assert!(cut > 150_000_000, "{cut}");
    let md_path = ran.stdout.lines().find(|l| l.ends_with(".md")).unwrap();
    let md = std::fs::read_to_string(md_path).unwrap();
    assert!(
        md.contains("**Output cut:**"),
        "the Markdown report says so"
    );
    assert!(!md.contains('\u{1b}'), "the report holds no raw escape");
    let id = report["meta"]["id"].as_str().unwrap();
    let saved = std::fs::metadata(
        repo.path()
            .join(".git/deep-review/runs")
            .join(id)
            .join("flood/stdout.jsonl"),
    )
    .unwrap()
    .len();
    assert!(saved <= 20 * 1024 * 1024, "{saved} bytes kept");
    // Its review, written before the flood, stands.
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["title"] == "Login accepts any password"),
        "{report:#}"
    );

    // Bounded memory: the 200 MB never sat in memory (the agents are waited for by the run).
    // The bound is issue 10's (200 MB for a hostile input) with room: the 20 MB kept, read and
    // parsed, plus what mimalloc holds of freed pages for reuse (about 120 MB in all; glibc's
    // malloc gave back sooner, under 100 MB).
    let rss = children_max_rss();
    assert!(
        rss < 160 * 1024 * 1024,
        "the run peaked at {} MB",
        rss / 1024 / 1024
    );
}
