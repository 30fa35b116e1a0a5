//! A raw review written as JSON of the [`Review`] schema (`deep-review schema review`).
//!
//! Agents that can emit structured output skip the Markdown reader entirely. The JSON must
//! match the schema; a syntax or shape error names the line, because a hand-edited file is the
//! usual cause and the line is what its author needs.

use crate::types::{Location, ParseWarning, Review};

use super::ParseError;

/// Whether text is meant as JSON: its first non-blank character opens an object.
pub fn looks_like_json(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{')
}

/// The JSON object inside a review that is only a fenced ```` ```json ```` block, as agents
/// often wrap structured output. `None` for anything else.
pub fn fenced_json(text: &str) -> Option<&str> {
    let t = text.trim_start_matches('\u{feff}').trim();
    let rest = t.strip_prefix("```")?;
    let (info, body) = rest.split_once('\n')?;
    if !info.trim().eq_ignore_ascii_case("json") {
        return None;
    }
    let body = body.trim_end().strip_suffix("```")?;
    looks_like_json(body).then_some(body)
}

/// Parses a JSON raw review. `agent` fills a missing `agent` field and wins over a different
/// one (with a warning); `raw` is kept from the JSON when it has one, else the JSON text.
pub fn parse_json_review(
    agent: &str,
    text: &str,
    path_for_errors: &str,
) -> Result<Review, ParseError> {
    let body = text.trim_start_matches('\u{feff}');
    // Syntax first, so a broken file gets the line of the break.
    let value: serde_json::Value =
        serde_json::from_str(body).map_err(|e| invalid(path_for_errors, &e))?;
    let Some(obj) = value.as_object() else {
        return Err(ParseError::Invalid {
            path: path_for_errors.to_string(),
            line: 1,
            message: "a JSON raw review must be an object (see `deep-review schema review`)".into(),
        });
    };
    let mut warnings = Vec::new();
    // `agent` is required by the schema, but the caller always knows it: supply it without
    // moving any line, so shape errors below still point at the right place.
    let source = if obj.contains_key("agent") {
        body.to_string()
    } else {
        let brace = body.find('{').unwrap_or(0);
        let after = &body[brace + 1..];
        let sep = if after.trim_start().starts_with('}') {
            ""
        } else {
            ","
        };
        format!(
            "{}{{\"agent\":{}{sep}{after}",
            &body[..brace],
            serde_json::Value::String(agent.to_string())
        )
    };
    let mut review: Review =
        serde_json::from_str(&source).map_err(|e| invalid(path_for_errors, &e))?;
    if review.agent != agent && !agent.is_empty() {
        warnings.push(ParseWarning {
            line: None,
            message: format!(
                "the JSON names agent {:?}; it is read as {agent:?}, the name it was given",
                review.agent
            ),
        });
        review.agent = agent.to_string();
    }
    if review.raw.is_empty() {
        review.raw = text.to_string();
    }
    for f in &mut review.findings {
        for loc in &mut f.locations {
            *loc = std::mem::replace(loc, Location::new("", None, None)).normalized();
        }
    }
    // Every warning points at a line; the JSON's own ones have none, so use the first.
    for w in &mut warnings {
        w.line.get_or_insert(1);
    }
    // Ids must be unique within a review: later duplicates get a suffix (linear: a review
    // may repeat one id thousands of times).
    let mut ids = super::ids::IdAllocator::default();
    for f in &mut review.findings {
        if f.id.is_empty() || ids.contains(&f.id) {
            let original = std::mem::take(&mut f.id);
            let base = if original.is_empty() { "F" } else { &original };
            let id = ids.suffixed(base);
            warnings.push(ParseWarning {
                line: None,
                message: format!(
                    "finding id {original:?} is empty or used twice; this one is {id}"
                ),
            });
            f.id = id;
        } else {
            ids.unique(&f.id);
        }
        if f.severity.is_none() {
            warnings.push(ParseWarning {
                line: None,
                message: format!("finding {} has no severity", f.id),
            });
        }
    }
    review.warnings.extend(warnings);
    Ok(review)
}

fn invalid(path: &str, e: &serde_json::Error) -> ParseError {
    ParseError::Invalid {
        path: path.to_string(),
        line: e.line().max(1),
        message: format!(
            "{e}; the file starts with `{{` so it is read as a JSON raw review: fix the JSON so it \
             matches `deep-review schema review`, or give the review as Markdown"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_review_and_fills_the_agent() {
        let text = "{\n  \"findings\": [\n    {\"id\": \"C1\", \"title\": \"Leak\", \"severity\": \"critical\",\n     \"locations\": [{\"path\": \"a.go\", \"start\": 3}]}\n  ]\n}\n";
        let r = parse_json_review("codex", text, "r.json").unwrap();
        assert_eq!(r.agent, "codex");
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.findings[0].locations[0].start, Some(3));
        assert_eq!(r.raw, text);
    }

    #[test]
    fn syntax_error_names_file_and_line() {
        let text = "{\n  \"agent\": \"x\",\n  \"findings\": [,]\n}\n";
        let e = parse_json_review("x", text, "bad.json").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("bad.json:3:"), "{msg}");
        assert!(msg.contains("deep-review schema review"), "{msg}");
    }

    #[test]
    fn shape_error_keeps_its_line_when_agent_is_supplied() {
        let text = "{\n  \"findings\": [\n    {\"id\": \"C1\"}\n  ]\n}\n";
        let e = parse_json_review("x", text, "shape.json").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("shape.json:3:"), "{msg}");
        assert!(msg.contains("title"), "{msg}");
    }

    #[test]
    fn empty_object_is_a_review_with_nothing_in_it() {
        let r = parse_json_review("x", "{}", "e.json").unwrap();
        assert!(r.findings.is_empty());
    }
}
