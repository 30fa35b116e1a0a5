//! Near-verbatim quotes, as reviewers write them, grounded against real git repositories:
//! `...` standing for several lines, comments left out or condensed, the file's trailing comment
//! omitted, an elision after a common `}`, diff and list markers, one corrupted line; quotes that
//! are not code; identifiers the finding proposes rather than cites; and the comment in the code
//! that marks an issue as known.

use deep_review::types::{CodeSnippet, Finding, Review, Verification, VerificationStatus};
use deep_review::verify::{VerifyContext, verify_reviews};

use crate::support::repo::Repo;

/// A repository whose change adds `path` with `text` (the base has an empty file there).
fn repo_adding(path: &str, text: &str) -> (Repo, String) {
    let repo = Repo::new();
    repo.write(path, "");
    let base = repo.commit("base");
    repo.write(path, text);
    repo.commit("Retry busy servers\n\nThe client now retries 503 answers up to five times.");
    (repo, base)
}

fn finding(location: &str, code: &str) -> Finding {
    let mut f = Finding::new("I1", "a finding");
    f.locations.push(location.parse().expect("a location"));
    f.code = Some(CodeSnippet {
        language: None,
        code: code.to_string(),
    });
    f
}

fn verify(repo: &Repo, base: &str, findings: Vec<Finding>) -> Vec<Finding> {
    let ctx = VerifyContext {
        repo: repo.path().to_path_buf(),
        head: "HEAD".to_string(),
        base: Some(base.to_string()),
        checkout: None,
    };
    let mut reviews = vec![Review {
        agent: "claude".to_string(),
        findings,
        ..Review::default()
    }];
    verify_reviews(&ctx, &mut reviews).expect("verify runs");
    reviews.remove(0).findings
}

fn v(f: &Finding) -> &Verification {
    f.verification.as_ref().expect("verified")
}

/// Each quote at `location` is grounded there, keeping the cited lines.
fn assert_grounded(path: &str, text: &str, location: &str, quotes: &[&str]) {
    let (repo, base) = repo_adding(path, text);
    let findings = verify(
        &repo,
        &base,
        quotes.iter().map(|q| finding(location, q)).collect(),
    );
    for (f, q) in findings.iter().zip(quotes) {
        assert_eq!(v(f).status, VerificationStatus::Grounded, "{q}\n{:?}", v(f));
        assert_eq!(v(f).quote_ok, Some(true), "{q}");
        assert_eq!(
            f.locations[0].to_string(),
            format!("{path}:{}", location.rsplit(':').next().unwrap()),
            "{q}"
        );
    }
}

const CLIENT_GO: &str = "package client

func (c *Client) Fetch(ctx context.Context, url string) (*Config, error) {
	resp, err := c.http.Do(
		ctx,
		newRequest(url),
		retry.WithAttempts(3),
	)
	if err != nil {
		return nil, err
	}
	return &Config{
		Name: resp.Name,
		Port: 8080,
	}, nil
}
";

#[test]
fn inline_ellipsis_stands_for_several_lines() {
    assert_grounded(
        "client/fetch.go",
        CLIENT_GO,
        "client/fetch.go:4-10",
        &[
            "resp, err := c.http.Do(...)\nif err != nil {\n    return nil, err\n}",
            "resp, err := c.http.Do(...)\n// ...\nreturn nil, err",
        ],
    );
    assert_grounded(
        "client/fetch.go",
        CLIENT_GO,
        "client/fetch.go:12-15",
        &[
            "return &Config{...}, nil",
            "return &Config{\n    Name: resp.Name,\n    ...\n}, nil",
        ],
    );
}

const RETRY_PY: &str = "def send(request):
    attempts = 0
    # Retry while the server is busy;
    # give up after five attempts.
    #
    # The backoff doubles each time.
    while attempts < 5:
        response = post(request)  # one round trip
        if response.status != 503:
            return response
        attempts += 1
    raise Busy(request)
";

#[test]
fn comments_left_out_condensed_or_trailing() {
    assert_grounded(
        "net/retry.py",
        RETRY_PY,
        "net/retry.py:2-8",
        &[
            // The comment block left out.
            "attempts = 0\nwhile attempts < 5:\n    response = post(request)",
            // Condensed to one line.
            "attempts = 0\n# Retry while the server is busy; give up after five attempts.\nwhile attempts < 5:",
            // The file's trailing comment left out, and the reviewer's own added.
            "while attempts < 5:\n    response = post(request)",
            "while attempts < 5:\n    response = post(request)  # <- no backoff",
        ],
    );
}

#[test]
fn an_elision_after_a_common_closing_brace_is_matched_past_its_first_occurrence() {
    let text = "fn drain(queue: &mut Queue) -> Result<(), Error> {
    let mut last = None;
    if queue.len() > MAX {
        for item in queue.iter() {
            notify(item);
        }
        log::warn!(\"queue over limit\");
        metrics::inc(\"drain.over\");
        queue.truncate(MAX);
        last = Some(Error::Full);
        audit(queue);
    }
    last.map_or(Ok(()), Err)
}
";
    // The `}` after the elision is the outer one (line 12), not the first `}` (line 6).
    assert_grounded(
        "src/drain.rs",
        text,
        "src/drain.rs:3-13",
        &["if queue.len() > MAX {\n    ...\n}\nlast.map_or(Ok(()), Err)"],
    );
}

#[test]
fn diff_and_list_markers_are_read_past() {
    let text = "retries:\n  max: 5\n  backoff: exponential\ntimeout: 30s\n";
    assert_grounded(
        "deploy/client.yaml",
        text,
        "deploy/client.yaml:2-3",
        &[
            // A diff whose context lines lost their leading space.
            "retries:\n-  max: 3\n+  max: 5\n  backoff: exponential",
            // The old side alone is not at head, the new side is.
            "- max: 3\n+ max: 5",
        ],
    );
    assert_grounded(
        "src/lib.rs",
        "pub fn area(w: u32, h: u32) -> u32 {\n    w * h\n}\n",
        "src/lib.rs:1-2",
        &[
            "- pub fn area(w: u32, h: u32) -> u32 {\n- w * h",
            "1. pub fn area(w: u32, h: u32) -> u32 {\n2. w * h",
        ],
    );
}

#[test]
fn one_corrupted_line_does_not_fail_a_long_quote() {
    let text = "func Load(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf(\"read policy: %w\", err)
	}
	var p Policy
	if err := yaml.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
";
    // A tool expanded `@path` in the middle of the quote.
    let quote = "data, err := os.ReadFile(path)\nif err != nil {\n    return nil, fmt.Errorf(\"read policy: %w\", err)\n}\n@/home/dev/src/policy/policy.go\nif err := yaml.Unmarshal(data, &p); err != nil {\n    return nil, err\n}";
    assert_grounded("policy/load.go", text, "policy/load.go:2-9", &[quote]);
    // Two lines of four wrong is too many: not grounded.
    let (repo, base) = repo_adding("policy/load.go", text);
    let wrong = "data, err := os.ReadFile(path)\nif err == nil {\n    panic(err)\n}";
    let findings = verify(&repo, &base, vec![finding("policy/load.go:2-5", wrong)]);
    assert_eq!(v(&findings[0]).status, VerificationStatus::Ungrounded);
}

#[test]
fn a_repetitive_file_and_an_elided_quote_stay_linear() {
    // 100,000 lines where `},` and `{` are every third line: a backtracking matcher takes
    // minutes here (nextest stops a hanging test); this one answers at once.
    let mut text = String::from("const table = [\n");
    for _ in 0..33_333 {
        text.push_str("  {\n    id: 1,\n  },\n");
    }
    text.push_str("  x();\n];\n");
    let (repo, base) = repo_adding("table.js", &text);
    let quotes = [
        "},\n...\nx();",
        "},\n...\nnever_there();",
        "{\n    id: 1,\n...\n},\n...\n];",
    ];
    let findings = verify(
        &repo,
        &base,
        quotes
            .iter()
            .map(|q| finding("table.js:99990", q))
            .collect(),
    );
    assert_eq!(v(&findings[0]).status, VerificationStatus::Grounded);
    assert_eq!(v(&findings[1]).status, VerificationStatus::Ungrounded);
    assert_eq!(v(&findings[2]).status, VerificationStatus::Grounded);
}

#[test]
fn a_quoted_commit_message_or_prose_is_unchecked_not_ungrounded() {
    let (repo, base) = repo_adding("net/retry.py", RETRY_PY);
    let findings = verify(
        &repo,
        &base,
        vec![
            finding(
                "net/retry.py:7",
                "Retry busy servers\n\nThe client now retries 503 answers up to five times.",
            ),
            finding(
                "net/retry.py:7",
                "The loop never waits between attempts, so a busy server gets five requests at once.",
            ),
            // Code that is not there stays ungrounded.
            finding("net/retry.py:7", "while attempts <= 5:"),
        ],
    );
    assert_eq!(
        v(&findings[0]),
        &Verification {
            status: VerificationStatus::Unchecked,
            path_ok: true,
            lines_ok: true,
            quote_ok: None,
            symbols_missing: Vec::new(),
            pre_existing: false,
            outside_change: false,
            known_issue_comment: None,
            note: Some("quoted text is a commit message, not code: not checked".to_string()),
        }
    );
    assert_eq!(v(&findings[1]).status, VerificationStatus::Unchecked);
    assert_eq!(
        v(&findings[1]).note.as_deref(),
        Some("quoted text is prose, not code: not checked")
    );
    assert_eq!(v(&findings[2]).status, VerificationStatus::Ungrounded);
}

#[test]
fn identifiers_a_finding_proposes_are_not_looked_up() {
    let text = "class LRUCache:\n    def __init__(self):\n        self.items = {}\n\n    def get(self, key):\n        return self.items.get(key)\n";
    let (repo, base) = repo_adding("cache/lru.py", text);
    let with = |explanation: &str, code: &str| {
        let mut f = finding("cache/lru.py:3", code);
        f.explanation = explanation.to_string();
        f
    };
    let findings = verify(
        &repo,
        &base,
        vec![
            with(
                "`LRUCache.get` never moves the key to the end. Replace the plain dict in \
                 `__init__` with an `OrderedDict` and call `move_to_end` on every hit.",
                "self.items = {}",
            ),
            with(
                "`LRUCache.get` never evicts anything.\n\n**Fix**: keep an `OrderedDict` and \
                 call `popitem(last=False)` past `max_size`.",
                "self.items = {}",
            ),
            with(
                "`LRUCache.get` never evicts.\n\n```diff\n-        self.items = {}\n+        self.items = OrderedDict()\n```\nThen `OrderedDict` keeps the order.",
                "self.items = {}",
            ),
            with(
                "The cache grows without bound; `OrderedDict` keeps insertion order.",
                "-        self.items = {}\n+        self.items = OrderedDict()",
            ),
            // A name the finding says the code has, and it does not: still reported.
            with(
                "`LRUCache.evict_oldest` is never called.",
                "self.items = {}",
            ),
        ],
    );
    for f in &findings[..4] {
        assert!(v(f).symbols_missing.is_empty(), "{:?}", v(f));
        assert_eq!(v(f).status, VerificationStatus::Grounded, "{:?}", v(f));
    }
    assert_eq!(
        v(&findings[4]).symbols_missing,
        vec!["LRUCache.evict_oldest"]
    );
}

#[test]
fn a_known_issue_comment_in_the_enclosing_block_is_quoted() {
    let text = "package queue

// Drain empties the queue.
// TODO(ops): bound the retries once the dead-letter queue exists.
func Drain(q *Queue) {
	for q.Len() > 0 {
		item := q.Pop()
		for !send(item) {
		}
	}
}

// Peek returns the next item.
func Peek(q *Queue) *Item {
	// Returns a temporary copy.
	return q.items[0]
}

func Size(q *Queue) int {
	return q.Len() // FIXME: counts tombstones
}
";
    // The comments are the code owners' (at the base); the change edits the code under them.
    let repo = Repo::new();
    repo.write(
        "queue/drain.go",
        text.replace("for !send(item)", "for !sendOnce(item)"),
    );
    let base = repo.commit("base");
    repo.write("queue/drain.go", text);
    repo.commit("Send until it works");
    let cited = || {
        vec![
            finding("queue/drain.go:8-9", "for !send(item) {\n}"),
            finding("queue/drain.go:16", "return q.items[0]"),
            finding("queue/drain.go:20", "return q.Len()"),
        ]
    };
    let findings = verify(&repo, &base, cited());
    assert_eq!(
        v(&findings[0]).known_issue_comment.as_deref(),
        Some("TODO(ops): bound the retries once the dead-letter queue exists.")
    );
    // "a temporary copy" says nothing about the code being temporary.
    assert_eq!(v(&findings[1]).known_issue_comment, None);
    assert_eq!(
        v(&findings[2]).known_issue_comment.as_deref(),
        Some("FIXME: counts tombstones")
    );

    // The same file added by the change: its comments are its author's, and none counts.
    let (repo, base) = repo_adding("queue/drain.go", text);
    let findings = verify(&repo, &base, cited());
    for f in &findings {
        assert_eq!(v(f).known_issue_comment, None, "{:?}", f.locations);
    }
}

#[test]
fn a_finding_naming_too_many_identifiers_has_the_first_ones_looked_up() {
    let (repo, base) = repo_adding("net/retry.py", RETRY_PY);
    let mut f = finding("net/retry.py:7", "while attempts < 5:");
    f.explanation = (0..20_001)
        .map(|i| format!("`made_up_{i:05}`"))
        .collect::<Vec<_>>()
        .join(" ");
    let ctx = VerifyContext {
        repo: repo.path().to_path_buf(),
        head: "HEAD".to_string(),
        base: Some(base),
        checkout: None,
    };
    let mut reviews = vec![Review {
        agent: "claude".to_string(),
        findings: vec![f],
        ..Review::default()
    }];
    let outcome = verify_reviews(&ctx, &mut reviews).expect("verify runs");
    assert_eq!(
        outcome.notes,
        vec!["symbols: 20001 identifiers to look up, only the first 20000 were"]
    );
    let missing = &v(&reviews[0].findings[0]).symbols_missing;
    assert_eq!(missing.len(), 20_000);
    assert!(!missing.contains(&"made_up_20000".to_string()));
}
