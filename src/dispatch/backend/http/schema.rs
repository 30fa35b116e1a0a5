//! The JSON Schema a model API is asked to answer in: the raw-review schema of
//! `deep-review schema review`, less what deep-review fills in itself (the agent's name, the raw
//! text, parse warnings, verification), with the fields that carry the review required so a
//! constrained decoder cannot stop at `{}`.

use std::sync::LazyLock;

use serde_json::Value;

use crate::types::Review;

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    let mut schema = serde_json::to_value(schemars::schema_for!(Review)).unwrap_or(Value::Null);
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        obj.remove("description");
        if let Some(props) = obj.get_mut("properties").and_then(Value::as_object_mut) {
            for filled in ["agent", "display_name", "raw", "unparsed", "warnings"] {
                props.remove(filled);
            }
        }
        obj.insert(
            "required".into(),
            serde_json::json!(["verdict", "summary", "findings"]),
        );
        if let Some(defs) = obj.get_mut("$defs").and_then(Value::as_object_mut) {
            defs.remove("ParseWarning");
            defs.remove("Verification");
            defs.remove("VerificationStatus");
            if let Some(props) = defs
                .get_mut("Finding")
                .and_then(|f| f.get_mut("properties"))
                .and_then(Value::as_object_mut)
            {
                props.remove("verification");
            }
        }
    }
    schema
});

/// The schema, built once.
pub fn review_schema() -> Value {
    SCHEMA.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_asks_for_the_review_and_nothing_deep_review_fills_in() {
        let s = review_schema();
        let text = s.to_string();
        assert!(s["properties"]["findings"].is_object());
        assert!(s["properties"].get("raw").is_none());
        assert!(!text.contains("Verification"), "no dangling $ref: {text}");
        assert!(!text.contains("ParseWarning"));
        assert_eq!(s["required"][0], "verdict");
        // Every $ref points at a definition that is there.
        for part in text.split("\"$ref\":\"#/$defs/").skip(1) {
            let name = part.split('"').next().unwrap();
            assert!(s["$defs"].get(name).is_some(), "missing $defs/{name}");
        }
    }
}
