//! Secrets kept out of everything deep-review shows or saves: command lines, the run bundle's
//! files (raw output, stderr, the review), progress lines and reports.
//!
//! Three nets, from the most to the least certain:
//! 1. the values of this process's secret-named variables (`*KEY*`, `*TOKEN*`, `*SECRET*`,
//!    `*PASS*`, `*PWD`, `COOKIE`, `SESSION`, credentials, auth): wherever they appear, verbatim;
//! 2. credentials in URLs (`https://user:pw@host` → `https://***@host`) and `Authorization:` /
//!    `Proxy-Authorization:` headers (any scheme: Basic, Bearer, token);
//! 3. values that look like a known kind of token (`sk-...`, `ghp_...`, `github_pat_...`,
//!    `AIza...`, `xox?-...`, `Bearer ...`).

use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

use regex::Regex;

pub const REDACTED: &str = "***";

/// A variable or option name that holds a secret. `env_key` (Codex: the *name* of the variable
/// holding the key) is not a secret.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with("env_key") {
        return false;
    }
    const WORDS: &[&str] = &[
        "key",
        "token",
        "secret",
        "pass",
        "credential",
        "auth",
        "cookie",
        "session",
    ];
    WORDS.iter().any(|w| lower.contains(w)) || lower.ends_with("pwd")
}

static URL_CREDENTIALS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s:@]+(?::[^/\s@]*)?@").expect("static regex")
});

static AUTH_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)[^\r\n"',}]+"#)
        .expect("static regex")
});

static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(sk-[A-Za-z0-9_\-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|AIza[0-9A-Za-z_\-]{16,}|xox[abprs]-[A-Za-z0-9\-]{8,}|Bearer\s+[A-Za-z0-9._\-]{8,})",
    )
    .expect("static regex")
});

/// The values of this process's secret-named variables (8 characters or more: shorter ones
/// would match ordinary words), longest first so a value containing another is replaced whole.
fn secret_values() -> &'static [String] {
    static VALUES: OnceLock<Vec<String>> = OnceLock::new();
    VALUES.get_or_init(|| {
        let mut values: Vec<String> = std::env::vars()
            .filter(|(k, v)| {
                is_secret_name(k) && v.len() >= 8 && !v.contains(std::path::MAIN_SEPARATOR)
            })
            .map(|(_, v)| v)
            .collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        values
    })
}

/// One pass that says whether `text` may hold anything to redact: the secret values and the
/// three patterns together, so the common case (nothing to hide) costs one scan of the text.
fn anything_to_redact(text: &str) -> bool {
    static ANY: OnceLock<Option<regex::RegexSet>> = OnceLock::new();
    let set = ANY.get_or_init(|| {
        let mut patterns: Vec<String> = secret_values().iter().map(|v| regex::escape(v)).collect();
        patterns.extend(
            [&*URL_CREDENTIALS, &*AUTH_HEADER, &*TOKENS]
                .iter()
                .map(|re| re.as_str().to_string()),
        );
        regex::RegexSet::new(patterns).ok()
    });
    match set {
        Some(set) => set.is_match(text),
        None => true,
    }
}

/// `text` with every secret replaced by `***`.
pub fn redact(text: &str) -> Cow<'_, str> {
    if !anything_to_redact(text) {
        return Cow::Borrowed(text);
    }
    let mut out = Cow::Borrowed(text);
    for value in secret_values() {
        if out.contains(value.as_str()) {
            out = Cow::Owned(out.replace(value.as_str(), REDACTED));
        }
    }
    for (re, with) in [
        (&*URL_CREDENTIALS, "${1}***@"),
        (&*AUTH_HEADER, "${1}***"),
        (&*TOKENS, REDACTED),
    ] {
        if re.is_match(&out) {
            out = Cow::Owned(re.replace_all(&out, with).into_owned());
        }
    }
    out
}

/// An option name that takes a secret as its value (`--api-key X`, `--token=X`). Narrower than
/// [`is_secret_name`]: `--no-session-persistence` is a switch, not a secret.
fn is_secret_flag(flag: &str) -> bool {
    let lower = flag.to_ascii_lowercase();
    !lower.ends_with("env_key")
        && ["key", "token", "secret", "password", "passwd", "credential"]
            .iter()
            .any(|w| lower.contains(w))
}

/// Command-line arguments with secrets hidden: `--api-key X`, `--token=X`, `-c ...api_key=X`,
/// and any argument that holds a secret value.
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for arg in args {
        if hide_next {
            out.push(REDACTED.to_string());
            hide_next = false;
            continue;
        }
        if let Some(flag) = arg.strip_prefix("--")
            && !flag.contains('=')
            && is_secret_flag(flag)
        {
            out.push(arg.clone());
            hide_next = true;
            continue;
        }
        if let Some((key, _)) = arg.split_once('=')
            && is_secret_flag(key.trim_start_matches('-'))
        {
            out.push(format!("{key}={REDACTED}"));
            continue;
        }
        out.push(redact(arg).into_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_recognised() {
        for name in [
            "OPENAI_API_KEY",
            "GH_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASS",
            "MYSQL_PWD",
            "PGPASSWORD",
            "COOKIE",
            "SESSION",
            "AUTH_HEADER",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["PATH", "HOME", "model_providers.fake.env_key", "LANG"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn urls_headers_and_tokens_are_hidden() {
        let text = "clone https://user:hunter2@example.com/r.git and git://tok@host/x\n\
            Authorization: Basic dXNlcjpwYXNz\n\
            {\"authorization\": \"token abc123xyz\"}\n\
            key sk-abcdefghijklmnop and ghp_abcdefghijklmnopqrstu";
        let shown = redact(text);
        for secret in [
            "hunter2",
            "user:",
            "tok@",
            "dXNlcjpwYXNz",
            "abc123xyz",
            "sk-abcdefghijklmnop",
            "ghp_abcd",
        ] {
            assert!(!shown.contains(secret), "{secret} leaked: {shown}");
        }
        assert!(shown.contains("https://***@example.com/r.git"), "{shown}");
        assert_eq!(redact("nothing secret here"), "nothing secret here");
    }

    #[test]
    fn arguments_naming_secrets_are_hidden() {
        let args: Vec<String> = [
            "--api-key",
            "plainsecret",
            "-c",
            "model_providers.x.api_key=hunter2",
            "-c",
            "model_providers.fake.env_key=FAKE_API_KEY",
            "--password=p",
            "--no-session-persistence",
            "--max-turns",
            "12",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let shown = redact_args(&args).join(" ");
        assert!(
            !shown.contains("plainsecret") && !shown.contains("hunter2"),
            "{shown}"
        );
        assert!(shown.contains("env_key=FAKE_API_KEY"), "{shown}");
        assert!(shown.contains("--password=***"), "{shown}");
        assert!(
            shown.ends_with("--no-session-persistence --max-turns 12"),
            "{shown}"
        );
    }
}
