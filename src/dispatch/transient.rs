//! Which failures are worth another try: rate limits, overloaded or failing servers, and
//! network errors, as the CLIs print them. Anything else (a bad flag, a missing login, a model
//! that does not exist) fails the same way again, so it is not retried.

use std::sync::OnceLock;

use regex::Regex;

struct Rule {
    pattern: Regex,
    /// Short reason for progress lines; `$1` is replaced by the first capture.
    reason: &'static str,
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let rule = |pattern: &str, reason: &'static str| Rule {
            pattern: Regex::new(pattern).expect("static regex"),
            reason,
        };
        vec![
            // A status code next to a word that makes it one: "HTTP 429", "status: 503",
            // "API Error: 529", "\"code\": 429", "429 Too Many Requests".
            rule(
                r#"(?i)(?:\bhttp\b|\bstatus\b|\bcode\b|\berror\b)[^0-9\n]{0,24}\b(429|50[0234]|529)\b"#,
                "HTTP $1",
            ),
            rule(
                r"(?i)\b(429|50[0234]|529)\s+(?:too many requests|internal server error|bad gateway|service unavailable|gateway timeout|overloaded)",
                "HTTP $1",
            ),
            rule(r"(?i)too many requests|rate[ _-]?limit", "a rate limit"),
            rule(r"(?i)overloaded", "an overloaded server"),
            rule(r"(?i)resource[ _]exhausted|quota exceeded", "exhausted capacity"),
            rule(
                r"(?i)service unavailable|temporarily unavailable|bad gateway|gateway timeout",
                "an unavailable server",
            ),
            rule(
                r"(?i)\b(ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|EPIPE)\b",
                "a network error ($1)",
            ),
            rule(
                r"(?i)socket hang up|fetch failed|network error|connection ?(?:reset|refused|closed|error|failed)|unable to connect|stream disconnected|error sending request|timed? ?out while connecting",
                "a network error",
            ),
        ]
    })
}

/// The reason a failed run looks transient ("HTTP 429", "a network error (ECONNRESET)"), or
/// `None` when it does not.
pub fn transient_reason(text: &str) -> Option<String> {
    for rule in rules() {
        if let Some(caps) = rule.pattern.captures(text) {
            let first = caps.get(1).map(|m| m.as_str()).unwrap_or("");
            return Some(rule.reason.replace("$1", first));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limits_and_server_errors_are_transient() {
        let cases = [
            ("Error: HTTP 429 Too Many Requests", "HTTP 429"),
            ("API Error: 529 {\"type\":\"overloaded_error\"}", "HTTP 529"),
            ("unexpected status 503 Service Unavailable", "HTTP 503"),
            ("{\"error\":{\"code\":429,\"message\":\"x\"}}", "HTTP 429"),
            (
                "You exceeded your current quota; rate limit hit",
                "a rate limit",
            ),
            ("RESOURCE_EXHAUSTED", "exhausted capacity"),
            ("Error: read ECONNRESET", "a network error (ECONNRESET)"),
            ("TypeError: fetch failed", "a network error"),
            // As the three CLIs print an unreachable server (AGENT_CLIS.md versions).
            (
                "API Error: Unable to connect to API (ConnectionRefused)",
                "a network error",
            ),
            (
                "Connection failed: error sending request",
                "a network error",
            ),
            (
                "[API Error: exception TypeError: fetch failed sending request]",
                "a network error",
            ),
            ("API Error: Rate limited (HTTP 429)", "HTTP 429"),
        ];
        for (text, reason) in cases {
            assert_eq!(transient_reason(text).as_deref(), Some(reason), "{text}");
        }
    }

    #[test]
    fn other_failures_and_bare_numbers_are_not() {
        for text in [
            "Invalid API key · Please run /login",
            "error: unexpected argument '--bogus' found",
            "at Object.<anonymous> (/usr/lib/node_modules/x/cli.js:500:12)",
            "model not found: gpt-9",
            "",
        ] {
            assert_eq!(transient_reason(text), None, "{text}");
        }
    }
}
