//! URLs that reports build from untrusted text: links to a forge's lines, commits and pull
//! requests, and repository-relative URIs for SARIF. Every piece that comes from a review (a
//! path, a line range) or from the metadata (the repository URL, a sha) is checked and
//! percent-encoded here, so no renderer ever writes a `javascript:` or `data:` link, a path that
//! climbs out of the repository, or a URL whose quotes end an attribute.

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

use crate::types::Location;

/// Characters escaped in one path segment: everything that would end the segment, start a
/// query or fragment, or break out of an attribute, plus spaces, `%` and non-ASCII (encoded as
/// UTF-8 by `utf8_percent_encode`).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'\'')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b']')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// A URL that is safe to put in an `href`: `https://`, `http://` or `mailto:` exactly at the
/// start (browsers ignore tabs and newlines inside a scheme, so any whitespace or control
/// character rejects the URL), or a fragment of this page (`#I1`). Everything else (`javascript:`,
/// `data:`, `file:`, relative paths) is refused, and so are quotes, angle brackets and
/// backticks, which no real link needs (escaping would keep them harmless anyway).
pub fn is_safe_href(url: &str) -> bool {
    if url.is_empty()
        || url
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || "\"<>`".contains(c))
    {
        return false;
    }
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("https://")
        || lower.starts_with("http://")
        || lower.starts_with("mailto:")
        || url.starts_with('#')
}

/// A repository-relative path, percent-encoded segment by segment, or `None` when it is not one:
/// empty, absolute (`/etc/passwd`, `C:\x`), with a `..` or `.` segment, a backslash, or a control
/// character. Reviewers write what they like; only a plain relative path becomes a link.
pub fn relative_path_uri(path: &str) -> Option<String> {
    let path = path.strip_prefix("./").unwrap_or(path);
    if path.is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || path.contains(':')
        || path.chars().any(char::is_control)
    {
        return None;
    }
    let mut out = String::with_capacity(path.len());
    for (i, segment) in path.split('/').enumerate() {
        if segment.is_empty() || segment == "." || segment == ".." {
            return None;
        }
        if i > 0 {
            out.push('/');
        }
        out.extend(utf8_percent_encode(segment, SEGMENT));
    }
    Some(out)
}

/// A full commit sha or an abbreviation (7 to 64 hex digits): the only revisions a link names.
fn is_sha(rev: &str) -> bool {
    (7..=64).contains(&rev.len()) && rev.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The web page of a repository on a forge, as links are built from it: `https://` (or
/// `http://`) with no whitespace, quotes or angle brackets, without a trailing slash.
fn repo_base(repo_url: &str) -> Option<&str> {
    let base = repo_url.trim_end_matches('/');
    let lower = base.to_ascii_lowercase();
    let scheme_ok = lower.starts_with("https://") || lower.starts_with("http://");
    let host_ok = base
        .split("://")
        .nth(1)
        .is_some_and(|rest| !rest.is_empty());
    let chars_ok = !base
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || "\"'<>`\\{}|^".contains(c));
    (scheme_ok && host_ok && chars_ok && is_safe_href(base)).then_some(base)
}

/// Where the report's links to the code point: the repository's web page and the reviewed
/// commit. Links are made only when both are known and well-formed.
#[derive(Debug, Clone, Copy)]
pub struct Forge<'a> {
    base: &'a str,
    head: &'a str,
}

impl<'a> Forge<'a> {
    /// The forge of a report, from `meta.repo_url` and `meta.head`.
    pub fn new(repo_url: Option<&'a str>, head: Option<&'a str>) -> Option<Self> {
        let base = repo_base(repo_url?)?;
        let head = head?.trim();
        is_sha(head).then_some(Forge { base, head })
    }

    /// `{repo_url}/blob/{head}/{path}#L10-L20` (GitHub's, Gitea's and Forgejo's layout; GitLab
    /// redirects `/blob/` to its `/-/blob/`).
    pub fn lines(&self, location: &Location) -> Option<String> {
        let path = relative_path_uri(&location.path)?;
        let fragment = match (location.start, location.end_line()) {
            (Some(s), Some(e)) if e > s => format!("#L{s}-L{e}"),
            (Some(s), _) => format!("#L{s}"),
            _ => String::new(),
        };
        Some(format!("{}/blob/{}/{path}{fragment}", self.base, self.head))
    }

    /// `{repo_url}/commit/{sha}` for a commit of the change.
    pub fn commit(&self, sha: &str) -> Option<String> {
        is_sha(sha).then(|| format!("{}/commit/{sha}", self.base))
    }
}

/// The repository's web page alone (for commit links when the head is unknown).
pub fn repo_page(repo_url: Option<&str>) -> Option<&str> {
    repo_base(repo_url?)
}

/// `{repo_url}/commit/{sha}` when the page is well-formed and `sha` is hex.
pub fn commit_url(repo_url: Option<&str>, sha: &str) -> Option<String> {
    let base = repo_page(repo_url)?;
    is_sha(sha).then(|| format!("{base}/commit/{sha}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "8543b4f05341ea138f67f998d51068e11e0bc8c3";

    #[test]
    fn only_web_and_mail_links_and_fragments_are_safe() {
        for ok in [
            "https://github.com/o/n",
            "HTTP://x.org/a",
            "mailto:a@b.c",
            "#I1",
        ] {
            assert!(is_safe_href(ok), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            "java\tscript:alert(1)",
            " javascript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:x",
            "file:///etc/passwd",
            "//evil.example/x",
            "relative/path.go",
            "https://x.org/\"onmouseover=alert(1)",
            "",
        ] {
            assert!(!is_safe_href(bad), "{bad}");
        }
    }

    #[test]
    fn paths_are_encoded_per_segment_and_escapes_are_refused() {
        assert_eq!(
            relative_path_uri("pkg/a b/\"x\"#1?.go").as_deref(),
            Some("pkg/a%20b/%22x%22%231%3F.go")
        );
        assert_eq!(
            relative_path_uri("./src/ünï.rs").as_deref(),
            Some("src/%C3%BCn%C3%AF.rs")
        );
        for bad in [
            "",
            "/etc/passwd",
            "../secret",
            "a/../../b",
            "a//b",
            "C:\\x",
            "a\\b",
            "javascript:alert(1)",
            "a\nb",
        ] {
            assert_eq!(relative_path_uri(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn forge_links_name_the_reviewed_commit_and_the_lines() {
        let forge = Forge::new(Some("https://github.com/o/n/"), Some(HEAD)).unwrap();
        let loc = Location::new("pkg/app.go", Some(10), Some(20));
        assert_eq!(
            forge.lines(&loc).unwrap(),
            format!("https://github.com/o/n/blob/{HEAD}/pkg/app.go#L10-L20")
        );
        let one = Location::new("pkg/app.go", Some(7), None);
        assert!(forge.lines(&one).unwrap().ends_with("#L7"));
        let file = Location::new("README.md", None, None);
        assert!(forge.lines(&file).unwrap().ends_with("/README.md"));
        assert_eq!(forge.lines(&Location::new("../x", Some(1), None)), None);
        assert_eq!(
            forge.commit("2a3c5b2").unwrap(),
            "https://github.com/o/n/commit/2a3c5b2"
        );
        assert_eq!(forge.commit("main"), None);
    }

    #[test]
    fn no_forge_without_a_web_page_and_a_sha() {
        assert!(Forge::new(None, Some(HEAD)).is_none());
        assert!(Forge::new(Some("https://github.com/o/n"), None).is_none());
        assert!(Forge::new(Some("https://github.com/o/n"), Some("main")).is_none());
        assert!(Forge::new(Some("javascript:alert(1)//"), Some(HEAD)).is_none());
        assert!(Forge::new(Some("git@github.com:o/n.git"), Some(HEAD)).is_none());
        assert!(Forge::new(Some("https://x.org/\"><script>"), Some(HEAD)).is_none());
        assert!(Forge::new(Some("https://"), Some(HEAD)).is_none());
    }
}
