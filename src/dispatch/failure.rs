//! Turning what a failed agent printed into a typed [`Failure`].
//!
//! The agent CLIs report most failures only as text: an exit status and some lines on stderr,
//! or an error event in their stream. Where they give a number (Claude's `api_error_status`,
//! Gemini's `{"error":{"code":429}}`) the backend passes it in and it decides; otherwise the
//! text is read here, once, into a type: a rate limit, an HTTP status, a network error, or a
//! plain exit with its cause. The supervisor decides retries by that type only.
//!
//! The cause shown to the user is the most informative line of the output, not its last one:
//! Gemini CLI ends a missing key with "Update your environment and try again", after the line
//! that says which variable to set.

use std::sync::LazyLock;

use regex::Regex;

use crate::types::Failure;

/// Lines that say something failed without saying what: never the cause when a better line
/// exists.
static GENERIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)^(?:
            update\ your\ environment\ and\ try\ again\.?
          | (?:please\ )?try\ again(?:\ later)?\.?
          | for\ more\ information.*
          | an?\ (?:unexpected\ )?error\ (?:has\ )?occurred\.?
          | error:?
          | failed\.?
          | at\ .*                           # a stack frame
          | node:internal.*
          | \^+ | ~+ | -+ | =+               # underlines and rules
          | \{ | \} | \[ | \]
        )$",
    )
    .expect("static regex")
});

/// Lines that carry a reason: they name an error, a missing thing or a refusal.
static INFORMATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(error|must|missing|not found|no such|invalid|denied|unauthori[sz]ed|forbidden|expired|refused|unable|cannot|can't|could not|failed|not set|required|exceeded|quota|limit|unknown|unsupported)\b",
    )
    .expect("static regex")
});

/// The most informative line of an error output: the first line that names a reason and is not
/// a generic closing line or a stack frame; else the last non-generic line. Trimmed to one
/// sentence.
pub fn cause_line(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !GENERIC.is_match(l))
        .collect();
    lines
        .iter()
        .find(|l| INFORMATIVE.is_match(l))
        .or(lines.last())
        .map(|l| crate::dispatch::output::one_sentence(l))
}

/// An HTTP status next to a word that makes it one: "HTTP 429", "status: 503",
/// "API Error: 529", "\"code\": 429", "429 Too Many Requests".
static STATUS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(?:\bhttp\b|\bstatus\b|\bcode\b|\berror\b)[^0-9\n]{0,24}\b([45]\d\d)\b|\b([45]\d\d)\s+(?:too many requests|internal server error|bad gateway|service unavailable|gateway timeout|overloaded)"#,
    )
    .expect("static regex")
});

static RATE_LIMIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)too many requests|rate[ _-]?limit|resource[ _]exhausted|quota exceeded")
        .expect("static regex")
});

static OVERLOADED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)overloaded|service unavailable|temporarily unavailable|bad gateway|gateway timeout",
    )
    .expect("static regex")
});

static NETWORK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|EPIPE)\b|socket hang up|fetch failed|network error|connection ?(?:reset|refused|closed|error|failed)|unable to connect|stream disconnected|error sending request|timed? ?out while connecting",
    )
    .expect("static regex")
});

/// "retry after 30s", "Please retry in 43.5s", "retry-after: 12".
static RETRY_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)retry(?:-after|\s+after|\s+in)\s*:?\s*(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec|seconds?)?\b")
        .expect("static regex")
});

/// The wait a message asks for, in seconds.
pub fn retry_after_in(text: &str) -> Option<f64> {
    let caps = RETRY_AFTER.captures(text)?;
    let n: f64 = caps[1].parse().ok()?;
    match caps.get(2).map(|m| m.as_str().to_ascii_lowercase()) {
        Some(unit) if unit.starts_with("ms") || unit.starts_with("milli") => Some(n / 1000.0),
        _ => Some(n),
    }
}

/// A failure of the provider read from `text` (a rate limit, an HTTP status, a network error),
/// with `cause` as its sentence; `None` when the text names none of these. `status` is a code
/// the agent gave as a number, which wins over one found in the text.
pub fn provider_failure(text: &str, cause: &str, status: Option<u16>) -> Option<Failure> {
    let status = status.or_else(|| {
        STATUS.captures(text).and_then(|c| {
            c.get(1)
                .or_else(|| c.get(2))
                .and_then(|m| m.as_str().parse().ok())
        })
    });
    let cause = cause.to_string();
    match status {
        Some(429) => Some(Failure::RateLimited {
            cause,
            retry_after_s: retry_after_in(text),
        }),
        Some(status) => Some(Failure::Http { status, cause }),
        None if RATE_LIMIT.is_match(text) => Some(Failure::RateLimited {
            cause,
            retry_after_s: retry_after_in(text),
        }),
        None if OVERLOADED.is_match(text) => Some(Failure::Http { status: 503, cause }),
        None if NETWORK.is_match(text) => Some(Failure::Network { cause }),
        None => None,
    }
}

/// The failure of a process that exited with `code`, from its stderr (and the error its own
/// stream reported, if any).
pub fn from_exit(code: i32, stderr: &str, reported: Option<&str>) -> Failure {
    let cause = reported.map(str::to_string).or_else(|| cause_line(stderr));
    let text = format!("{}\n{stderr}", reported.unwrap_or(""));
    let sentence = match &cause {
        Some(c) => format!("exited with code {code}: {c}"),
        None => format!("exited with code {code}"),
    };
    provider_failure(&text, &sentence, None).unwrap_or(Failure::Exited { code, cause })
}

/// The failure an agent's own stream reported while it exited 0 (or before it exited).
pub fn from_report(reported: &str, status: Option<u16>) -> Failure {
    provider_failure(reported, reported, status).unwrap_or_else(|| Failure::Reported {
        cause: reported.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_is_the_line_that_says_what_is_wrong() {
        let gemini = "Loaded cached credentials.\n\
            When using Gemini API, you must specify the GEMINI_API_KEY environment variable.\n\
            Update your environment and try again (no reload needed if using .env)!\n";
        assert_eq!(
            cause_line(gemini).as_deref(),
            Some(
                "When using Gemini API, you must specify the GEMINI_API_KEY environment variable."
            )
        );
        let node = "TypeError: Cannot read properties of undefined\n    at Object.<anonymous> (/x/cli.js:5:1)\n    at Module._compile (node:internal/modules/cjs/loader:1)\n";
        assert_eq!(
            cause_line(node).as_deref(),
            Some("TypeError: Cannot read properties of undefined")
        );
        assert_eq!(cause_line("\n\n"), None);
        assert_eq!(
            cause_line("something odd\n").as_deref(),
            Some("something odd")
        );
    }

    #[test]
    fn provider_failures_become_types_that_decide_retries() {
        let cases: [(&str, Failure); 6] = [
            (
                "Error: HTTP 429 Too Many Requests, retry after 12s",
                Failure::RateLimited {
                    cause: "c".into(),
                    retry_after_s: Some(12.0),
                },
            ),
            (
                "API Error: 529 {\"type\":\"overloaded_error\"}",
                Failure::Http {
                    status: 529,
                    cause: "c".into(),
                },
            ),
            (
                "unexpected status 503 Service Unavailable",
                Failure::Http {
                    status: 503,
                    cause: "c".into(),
                },
            ),
            (
                "RESOURCE_EXHAUSTED: Please retry in 43.5s",
                Failure::RateLimited {
                    cause: "c".into(),
                    retry_after_s: Some(43.5),
                },
            ),
            (
                "Error: read ECONNRESET",
                Failure::Network { cause: "c".into() },
            ),
            (
                "API Error: Unable to connect to API (ConnectionRefused)",
                Failure::Network { cause: "c".into() },
            ),
        ];
        for (text, want) in cases {
            let got = provider_failure(text, "c", None).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(got, want, "{text}");
            assert!(got.is_transient(), "{text}");
        }
        assert_eq!(
            provider_failure("x", "c", Some(401)),
            Some(Failure::Http {
                status: 401,
                cause: "c".into()
            })
        );
        assert!(
            !provider_failure("x", "c", Some(401))
                .unwrap()
                .is_transient()
        );
    }

    #[test]
    fn other_failures_are_plain_exits_that_are_not_retried() {
        for text in [
            "Invalid API key · Please run /login",
            "error: unexpected argument '--bogus' found",
            "model not found: gpt-9",
            "at Object.<anonymous> (/usr/lib/node_modules/x/cli.js:500:12)",
        ] {
            let f = from_exit(1, text, None);
            assert!(
                matches!(f, Failure::Exited { code: 1, .. }),
                "{text}: {f:?}"
            );
            assert!(!f.is_transient(), "{text}");
        }
        let f = from_exit(
            41,
            "you must specify the GEMINI_API_KEY environment variable\nUpdate your environment and try again\n",
            None,
        );
        assert_eq!(
            f.sentence(),
            "exited with code 41: you must specify the GEMINI_API_KEY environment variable"
        );
    }
}
