//! The HTML report in a real browser: Debian's headless Chromium opens the page of the seed
//! report's consolidation and the page of a report full of hostile text. Each test checks the
//! title, one `data-finding-id` element per shown finding, that the page's own script ran (its
//! CSP hash matches) and nothing else did, and that no request left the file: Chromium runs with
//! every request sent to a proxy on 127.0.0.1 that records what it is asked for, and a control
//! page that loads an image proves the recorder sees requests. Chromium itself still calls a few
//! Google services at start-up whatever the flags (the component updater's on-demand check, the
//! account check; the same with `about:blank`): those exact requests are told apart and every
//! other request fails the test. Screenshots (light, dark, phone) are kept under
//! `target/tmp/report-html/` as CI artefacts.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assert_cmd::Command as CargoCommand;
use deep_review::types::Report;
use serde_json::Value;

const CHROMIUM: &str = "/usr/bin/chromium";
const SEED: &str = "20260324-131047-pr-236.md";

/// Chromium, which must be installed.
fn chromium() -> PathBuf {
    let path = PathBuf::from(CHROMIUM);
    assert!(
        path.is_file(),
        "{CHROMIUM} is missing: this test opens the HTML report in Debian's Chromium; install it \
         with scripts/install-chromium.sh (apt-get install chromium)"
    );
    path
}

/// Where the pages and screenshots are kept after the test: `target/tmp/report-html/`.
fn artefacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An HTTP proxy on 127.0.0.1 that answers every request with 404 and remembers its request
/// line (`GET http://host/path`, or `CONNECT host:443` for HTTPS).
struct RequestRecorder {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl RequestRecorder {
    fn start() -> RequestRecorder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut line = String::new();
                let _ = BufReader::new(&stream).read_line(&mut line);
                let line = line.trim();
                record.lock().unwrap().push(line.to_string());
                let _ = stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
        RequestRecorder { port, seen }
    }

    /// The requests recorded since the last call, without Chromium's own start-up calls and
    /// without connections that asked for nothing (Chromium opens spare sockets to its proxy).
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.seen.lock().unwrap())
            .into_iter()
            .filter(|r| !r.is_empty() && !is_chromiums_own(r))
            .collect()
    }
}

/// The calls Chromium makes by itself at start-up, with any page or none: its component
/// updater (an on-demand check that `--disable-component-update` does not stop), the account
/// check, and network time (also switched off by a flag below). Matched exactly, so a page's
/// request to any other address, or to these hosts in another way, is still caught.
fn is_chromiums_own(request_line: &str) -> bool {
    [
        "CONNECT update.googleapis.com:443 ",
        "POST http://update.googleapis.com/service/update2/json?",
        "CONNECT accounts.google.com:443 ",
        "GET http://clients2.google.com/time/1/current?",
    ]
    .iter()
    .any(|own| request_line.starts_with(own))
}

/// Runs headless Chromium on `url` with a new profile, every request through `recorder`, and
/// returns what it printed on stdout (the DOM with `--dump-dom`).
fn chromium_run(recorder: &RequestRecorder, extra: &[String], url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-features=NetworkTimeServiceQuerying",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .arg(format!("--proxy-server=http://127.0.0.1:{}", recorder.port))
    // Loopback too goes through the recorder: nothing may bypass it.
    .arg("--proxy-bypass-list=<-loopback>")
    .args(extra)
    .arg(url);
    let ran = crate::support::agents::run_with_stdin(cmd, "", Duration::from_secs(120));
    assert!(
        !ran.timed_out && ran.status.success(),
        "chromium on {url} (timed out: {}, {}): {}",
        ran.timed_out,
        ran.status,
        ran.stderr
    );
    ran.stdout
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The recorder sees a page's requests: a page that loads an image over HTTP is caught. Without
/// this, "no request" could mean a recorder that records nothing.
fn control_page_is_caught(recorder: &RequestRecorder, dir: &Path) {
    let page = dir.join("control.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><title>control</title><img src=\"http://leak.invalid/control.png\">",
    )
    .unwrap();
    chromium_run(recorder, &["--dump-dom".into()], &file_url(&page));
    let seen = recorder.take();
    assert!(
        seen.iter().any(|r| r.contains("leak.invalid")),
        "the recorder did not see the control page's image request; it saw {seen:?}"
    );
}

/// The `data-finding-id` values in a DOM, each once.
fn finding_ids(dom: &str) -> Vec<String> {
    let re = regex::Regex::new(r#"data-finding-id="([^"]*)""#).unwrap();
    re.captures_iter(dom).map(|c| c[1].to_string()).collect()
}

/// Elements that would load something from elsewhere.
fn assert_loads_nothing(dom: &str) {
    for tag in [
        "<img", "<iframe", "<link", "<object", "<embed", "<video", "<audio", "<source",
    ] {
        assert!(!dom.contains(tag), "the page holds {tag}");
    }
    assert!(!dom.contains("<script src"), "the page loads a script");
    assert!(!dom.contains("@import"), "the stylesheet imports another");
    assert!(!dom.contains("url("), "the stylesheet names a URL");
}

/// Light, dark and phone-width screenshots of `page`, kept in `dir` as `<name>-*.png`.
fn screenshots(recorder: &RequestRecorder, page: &Path, dir: &Path, name: &str) {
    let shots = [
        ("light", vec!["--window-size=1280,4000".to_string()]),
        (
            "dark",
            vec![
                "--window-size=1280,4000".to_string(),
                "--force-dark-mode".to_string(),
            ],
        ),
        ("phone", vec!["--window-size=390,2400".to_string()]),
    ];
    let mut images = Vec::new();
    for (kind, mut flags) in shots {
        let png = dir.join(format!("{name}-{kind}.png"));
        let _ = std::fs::remove_file(&png);
        flags.push(format!("--screenshot={}", png.display()));
        chromium_run(recorder, &flags, &file_url(page));
        let bytes =
            std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot {}: {e}", png.display()));
        assert!(
            bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 20_000,
            "{} is not a screenshot of a page ({} bytes)",
            png.display(),
            bytes.len()
        );
        images.push(bytes);
    }
    assert_ne!(
        images[0], images[1],
        "dark mode looks exactly like light mode"
    );
}

#[test]
#[ignore = "needs ../shared (the seed report) and Chromium (scripts/install-chromium.sh): run with --run-ignored all"]
fn the_seed_reports_page_opens_with_every_finding_and_makes_no_request() {
    chromium();
    let seed = crate::support::shared::shared_dir("fixtures/reports").join(SEED);
    let dir = artefacts();
    let page = dir.join("seed.html");
    let consolidate = |format: &str, out: Option<&Path>| {
        let mut cmd = CargoCommand::cargo_bin("deep-review").unwrap();
        cmd.args(["consolidate", "--from-report"])
            .arg(&seed)
            .args(["--format", format]);
        if let Some(out) = out {
            cmd.arg("--out").arg(out);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    consolidate("html", Some(&page));
    let report: Value = serde_json::from_slice(&consolidate("json", None)).unwrap();
    let shown: BTreeSet<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["tier"] == "shown")
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    assert!(
        shown.len() >= 6,
        "the seed consolidates to its findings: {shown:?}"
    );

    let recorder = RequestRecorder::start();
    control_page_is_caught(&recorder, &dir);

    let dom = chromium_run(&recorder, &["--dump-dom".into()], &file_url(&page));
    assert!(
        dom.contains("<title>Deep Review: 20260324-131047-pr-236</title>"),
        "title: {}",
        &dom[..dom.len().min(2000)]
    );
    let ids = finding_ids(&dom);
    assert_eq!(
        ids.iter().cloned().collect::<BTreeSet<_>>(),
        shown,
        "one card per shown finding"
    );
    assert_eq!(ids.len(), shown.len(), "each finding once: {ids:?}");
    assert!(
        dom.contains("class=\"filters\" id=\"filters\" aria-label"),
        "the filters are shown: the page's script ran under its CSP"
    );
    assert_loads_nothing(&dom);
    std::fs::write(dir.join("seed.dom.html"), &dom).unwrap();

    screenshots(&recorder, &page, &dir, "seed");
    let seen = recorder.take();
    assert!(seen.is_empty(), "the page made requests: {seen:?}");
}

#[test]
#[ignore = "needs Chromium (scripts/install-chromium.sh): run with --run-ignored all"]
fn hostile_text_neither_runs_nor_loads_in_the_browser() {
    chromium();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/showcase.json");
    let report: Report = serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    let dir = artefacts();
    let page = dir.join("showcase.html");
    std::fs::write(&page, deep_review::report::html::render(&report)).unwrap();

    let recorder = RequestRecorder::start();
    control_page_is_caught(&recorder, &dir);

    let dom = chromium_run(&recorder, &["--dump-dom".into()], &file_url(&page));
    // Every payload sets the title to "pwned" if it runs.
    assert!(
        dom.contains("<title>Deep Review: 20261202-101500-feature-x</title>"),
        "a payload ran or the title is wrong: {}",
        &dom[..dom.len().min(2000)]
    );
    assert!(!dom.contains("<title>pwned"), "a payload ran");
    assert_eq!(
        dom.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert_loads_nothing(&dom);
    let shown: BTreeSet<String> = report
        .findings
        .iter()
        .filter(|f| f.is_shown())
        .map(|f| f.id.clone())
        .collect();
    let ids: BTreeSet<String> = finding_ids(&dom).into_iter().collect();
    assert!(ids.is_superset(&shown), "{ids:?} lacks some of {shown:?}");
    assert!(dom.contains("class=\"filters\" id=\"filters\" aria-label"));
    assert!(
        dom.contains("<details class=\"low-confidence\">"),
        "low confidence starts collapsed"
    );
    std::fs::write(dir.join("showcase.dom.html"), &dom).unwrap();

    // A permalink to a finding in the collapsed Low Confidence section opens it.
    let dom = chromium_run(
        &recorder,
        &["--dump-dom".into()],
        &format!("{}#S2", file_url(&page)),
    );
    assert!(
        dom.contains("<details class=\"low-confidence\" open=\"\">"),
        "the permalink #S2 did not open its section"
    );

    screenshots(&recorder, &page, &dir, "showcase");
    let seen = recorder.take();
    assert!(seen.is_empty(), "the page made requests: {seen:?}");
}

#[test]
#[ignore = "needs Chromium (scripts/install-chromium.sh): run with --run-ignored all"]
fn the_filters_hide_findings_by_severity_and_agent() {
    chromium();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/showcase.json");
    let report: Report = serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    let html = deep_review::report::html::render(&report);
    // The page's policy allows only its own script; this copy drops the policy so that a test
    // script can click the filters as a reader would.
    let policy = regex::Regex::new(r#"<meta http-equiv="Content-Security-Policy"[^>]*>"#).unwrap();
    assert!(policy.is_match(&html));
    let clicks = "<script>\
        document.querySelector('input[name=severity][value=critical]').click();\
        document.querySelector('input[name=agent][value=codex]').click();\
        </script></body>";
    let html = policy.replace(&html, "").replace("</body>", clicks);
    let dir = artefacts();
    let page = dir.join("showcase-filtered.html");
    std::fs::write(&page, html).unwrap();

    let recorder = RequestRecorder::start();
    let dom = chromium_run(&recorder, &["--dump-dom".into()], &file_url(&page));
    let card = regex::Regex::new(r#"<article [^>]*data-finding-id="([^"]+)"[^>]*>"#).unwrap();
    let hidden: Vec<String> = card
        .captures_iter(&dom)
        .filter(|c| c[0].contains(" hidden"))
        .map(|c| c[1].to_string())
        .collect();
    // C1 is critical; S1 and S2 are Codex's alone. C1 is Codex's too, but not only Codex's.
    assert_eq!(hidden, ["C1", "S1", "S2"], "{dom}");
    assert!(dom.contains(">3 hidden by the filters<"));
}

#[test]
#[ignore = "needs Chromium (scripts/install-chromium.sh): run with --run-ignored all"]
fn the_index_page_lists_every_report_and_makes_no_request() {
    use deep_review::report::html::{IndexEntry, render, render_index};
    chromium();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/showcase.json");
    let report: Report = serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    let dir = artefacts().join("store");
    std::fs::create_dir_all(&dir).unwrap();
    // Three rounds of one target and one of another, written as a store would.
    let mut entries = Vec::new();
    for (id, round, target_pr) in [
        ("20261130-090000-feature-x", 1, None),
        ("20261201-090000-pr-7", 1, Some(7)),
        ("20261202-101500-feature-x", 2, None),
    ] {
        let mut r = report.clone();
        r.meta.id = id.to_string();
        r.meta.round = Some(round);
        r.meta.date = chrono::NaiveDateTime::parse_from_str(&id[..15], "%Y%m%d-%H%M%S").ok();
        if let Some(n) = target_pr {
            r.meta.pr.as_mut().unwrap().number = n;
        }
        let file = format!("{id}.html");
        std::fs::write(dir.join(&file), render(&r)).unwrap();
        entries.push(IndexEntry::from_report(&r, file));
    }
    let index = dir.join("index.html");
    std::fs::write(&index, render_index(&entries)).unwrap();

    let recorder = RequestRecorder::start();
    let dom = chromium_run(&recorder, &["--dump-dom".into()], &file_url(&index));
    assert!(dom.contains("<title>Deep Review reports</title>"));
    let rows = regex::Regex::new(r#"data-report-id="([^"]+)""#).unwrap();
    let ids: Vec<&str> = rows
        .captures_iter(&dom)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "20261202-101500-feature-x",
            "20261130-090000-feature-x",
            "20261201-090000-pr-7"
        ],
        "grouped by target, the newest target and report first"
    );
    assert_eq!(dom.matches("<script").count(), 0);
    assert_loads_nothing(&dom);
    // The links open the pages beside the index.
    let page = chromium_run(
        &recorder,
        &["--dump-dom".into()],
        &file_url(&dir.join("20261201-090000-pr-7.html")),
    );
    assert!(page.contains("<title>Deep Review: 20261201-090000-pr-7</title>"));
    assert!(dom.contains("href=\"20261201-090000-pr-7.html\""));

    let png = dir.join("index.png");
    chromium_run(
        &recorder,
        &[
            "--window-size=1000,900".into(),
            format!("--screenshot={}", png.display()),
        ],
        &file_url(&index),
    );
    assert!(std::fs::metadata(&png).unwrap().len() > 10_000);
    let seen = recorder.take();
    assert!(seen.is_empty(), "the index made requests: {seen:?}");
}

#[test]
#[ignore = "needs Chromium (scripts/install-chromium.sh): run with --run-ignored all"]
fn the_scorecards_page_draws_its_chart_and_makes_no_request() {
    use deep_review::outcomes::{load::Loaded, stats};
    use deep_review::types::{Action, Resolution, ResolutionItem};
    chromium();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/showcase.json");
    let report: Report = serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    // Two changes reviewed with the showcase's findings (one agent's name is hostile markup);
    // the first's findings fixed, the second's skipped.
    let mut reports = Vec::new();
    for (i, action) in [Action::Fixed, Action::Skipped].into_iter().enumerate() {
        let mut r = report.clone();
        r.meta.id = format!("2026120{}-090000-change-{i}", i + 1);
        r.meta.pr = None;
        r.meta.branch = Some(format!("change-{i}"));
        r.resolution = Some(Resolution {
            items: r
                .findings
                .iter()
                .map(|f| ResolutionItem {
                    id: f.id.clone(),
                    title: f.title.clone(),
                    action: action.clone(),
                    reason: "not now".into(),
                })
                .collect(),
            ..Resolution::default()
        });
        reports.push(r);
    }
    let s = stats::compute(
        &Loaded {
            reports,
            sources: vec!["a test".into()],
            warnings: vec![],
        },
        true,
    );
    let dir = artefacts().join("store");
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("stats.html");
    std::fs::write(
        &page,
        deep_review::report::html::render_stats(&s, Some("index.html")),
    )
    .unwrap();

    let recorder = RequestRecorder::start();
    control_page_is_caught(&recorder, &dir);
    let dom = chromium_run(&recorder, &["--dump-dom".into()], &file_url(&page));
    assert!(
        dom.contains("<title>Deep Review: reviewer scorecards</title>"),
        "the hostile agent name ran or broke the page: {dom}"
    );
    assert_eq!(dom.matches("class=\"chart-bar\"").count(), s.agents.len());
    assert_eq!(s.agents.len(), 4);
    assert_eq!(dom.matches("<script").count(), 0);
    // The hostile name is text: no element got an attribute out of it.
    let attribute = regex::Regex::new(r#"<[^>]*\sonmouseover="#).unwrap();
    assert!(!attribute.is_match(&dom), "{dom}");
    assert_loads_nothing(&dom);
    assert!(dom.contains("href=\"index.html\""));
    screenshots(&recorder, &page, &dir, "stats");
    let seen = recorder.take();
    assert!(seen.is_empty(), "the scorecards made requests: {seen:?}");
}
