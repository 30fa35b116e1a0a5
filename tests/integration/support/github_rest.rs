//! GitHub's REST API as GitHub describes it: every request the fake GitHub receives is matched to
//! its operation in the OpenAPI description of api.github.com (npm `@octokit/openapi`, pinned and
//! installed by `scripts/install-github-descriptions.sh`) and checked as GitHub checks it: the
//! method and path, the path and query parameters, the JSON body against the operation's request
//! schema. What GitHub would refuse gets GitHub's answer (404, 400 "Problems parsing JSON", 422
//! "Invalid request"); what GitHub would accept but the description says not to rely on (an
//! undocumented query parameter, a deprecated operation or body field, an operation marked
//! `x-github.enabledForGitHubApps: false` when the token is an App's) is a conformance
//! violation that fails the test.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

/// How deep `$ref`s are followed when a body schema is made self-contained.
const MAX_REF_DEPTH: usize = 24;

/// One operation of the description.
#[derive(Debug)]
pub struct Operation {
    /// `pulls/create-review`.
    pub id: String,
    pub method: String,
    /// `/repos/{owner}/{repo}/pulls/{pull_number}`.
    pub template: String,
    segments: Vec<Segment>,
    pub enabled_for_apps: bool,
    pub deprecated: bool,
    parameters: Vec<Parameter>,
    /// Whether a body is required, and its schema with every `$ref` inlined.
    body: Option<(bool, Value)>,
}

#[derive(Debug)]
enum Segment {
    Literal(String),
    Param(String),
}

#[derive(Debug)]
struct Parameter {
    name: String,
    location: String,
    required: bool,
    schema: Value,
    deprecated: bool,
}

/// A request matched to its operation.
#[derive(Debug)]
pub struct Matched<'a> {
    pub operation: &'a Operation,
    pub path_params: HashMap<String, String>,
    pub query: Vec<(String, String)>,
    /// The body as JSON (`Null` when there was none).
    pub body: Value,
    /// What GitHub accepts but the description says not to do: each fails the test.
    pub violations: Vec<String>,
}

/// What GitHub answers a request it refuses, and why the fake says it did.
#[derive(Debug)]
pub struct Refusal {
    pub status: u16,
    pub body: Value,
    /// A conformance violation to record (deep-review sent what GitHub refuses).
    pub violation: String,
}

/// The REST description, loaded once.
pub struct RestSpec {
    operations: Vec<Operation>,
}

impl RestSpec {
    /// Reads `api.github.com.json` of `@octokit/openapi`.
    pub fn load(path: &std::path::Path) -> Result<RestSpec, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
        let mut operations = Vec::new();
        let paths = doc["paths"]
            .as_object()
            .ok_or_else(|| format!("{} has no paths", path.display()))?;
        for (template, item) in paths {
            let shared: Vec<Value> = item["parameters"].as_array().cloned().unwrap_or_default();
            for (method, op) in item.as_object().into_iter().flatten() {
                if !matches!(
                    method.as_str(),
                    "get" | "post" | "put" | "patch" | "delete" | "head"
                ) {
                    continue;
                }
                operations.push(operation(&doc, template, method, op, &shared));
            }
        }
        Ok(RestSpec { operations })
    }

    /// The operation `operation_id`, for tests that name one.
    pub fn operation(&self, id: &str) -> Option<&Operation> {
        self.operations.iter().find(|o| o.id == id)
    }

    /// Matches and checks one request. `path` is relative to the API's base (`/repos/...`);
    /// `app_token` says whether the token is a GitHub App's (`ghs_...`).
    pub fn check<'a>(
        &'a self,
        method: &str,
        path_and_query: &str,
        body: &str,
        app_token: bool,
    ) -> Result<Matched<'a>, Refusal> {
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        let method = method.to_ascii_lowercase();
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let Some((op, path_params)) = self
            .operations
            .iter()
            .filter(|o| o.method == method)
            .find_map(|o| o.matches(&parts).map(|p| (o, p)))
        else {
            return Err(Refusal {
                status: 404,
                body: not_found(),
                violation: format!(
                    "{} {path}: no operation of GitHub's REST description has this method and path",
                    method.to_ascii_uppercase()
                ),
            });
        };
        let mut violations = Vec::new();
        if op.deprecated {
            violations.push(format!("{}: the operation is deprecated", op.id));
        }
        if app_token && !op.enabled_for_apps {
            return Err(Refusal {
                status: 403,
                body: json!({
                    "message": "Resource not accessible by integration",
                    "documentation_url": documentation(op),
                    "status": "403",
                }),
                violation: format!(
                    "{} ({} {}): GitHub's description marks it `enabledForGitHubApps: false`; an App installation token (GITHUB_TOKEN in Actions) is refused",
                    op.id,
                    method.to_ascii_uppercase(),
                    op.template
                ),
            });
        }
        for p in op.parameters.iter().filter(|p| p.location == "path") {
            let value = path_params.get(&p.name).map(String::as_str).unwrap_or("");
            if let Err(why) = scalar_fits(value, &p.schema) {
                return Err(Refusal {
                    status: 404,
                    body: not_found(),
                    violation: format!("{}: path parameter `{}` {why}", op.id, p.name),
                });
            }
        }
        let query = parse_query(query);
        for (name, value) in &query {
            match op
                .parameters
                .iter()
                .find(|p| p.location == "query" && &p.name == name)
            {
                None => violations.push(format!(
                    "{}: query parameter `{name}` is not one of the operation's",
                    op.id
                )),
                Some(p) => {
                    if p.deprecated {
                        violations
                            .push(format!("{}: query parameter `{name}` is deprecated", op.id));
                    }
                    if let Err(why) = scalar_fits(value, &p.schema) {
                        return Err(invalid(op, &format!("`{name}` {why}")));
                    }
                }
            }
        }
        for p in op
            .parameters
            .iter()
            .filter(|p| p.location == "query" && p.required)
        {
            if !query.iter().any(|(n, _)| n == &p.name) {
                return Err(invalid(op, &format!("\"{}\" wasn't supplied.", p.name)));
            }
        }
        let body = match (&op.body, body.trim()) {
            (Some((true, _)), "") => {
                return Err(Refusal {
                    status: 400,
                    body: json!({"message": "Problems parsing JSON", "documentation_url": documentation(op), "status": "400"}),
                    violation: format!("{}: the operation requires a JSON body", op.id),
                });
            }
            (_, "") => Value::Null,
            (None, _) => {
                violations.push(format!("{}: the operation takes no body", op.id));
                Value::Null
            }
            (Some((_, schema)), text) => {
                let value: Value = serde_json::from_str(text).map_err(|_| Refusal {
                    status: 400,
                    body: json!({"message": "Problems parsing JSON", "documentation_url": documentation(op), "status": "400"}),
                    violation: format!("{}: the body is not JSON", op.id),
                })?;
                let validator = jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft7)
                    .build(schema)
                    .map_err(|e| Refusal {
                        status: 500,
                        body: json!({"message": "the fake could not compile the schema"}),
                        violation: format!("{}: the request schema does not compile: {e}", op.id),
                    })?;
                let errors: Vec<String> = validator
                    .iter_errors(&value)
                    .map(|e| format!("{} at `{}`", e, e.instance_path()))
                    .collect();
                if !errors.is_empty() {
                    return Err(invalid(op, &errors.join("; ")));
                }
                deprecated_fields(schema, &value, "", &mut |field| {
                    violations.push(format!("{}: body field `{field}` is deprecated", op.id));
                });
                value
            }
        };
        Ok(Matched {
            operation: op,
            path_params,
            query,
            body,
            violations,
        })
    }
}

impl Operation {
    /// The path parameters when `parts` (the path's segments) fit the template.
    fn matches(&self, parts: &[&str]) -> Option<HashMap<String, String>> {
        if parts.len() != self.segments.len() {
            return None;
        }
        let mut params = HashMap::new();
        for (segment, part) in self.segments.iter().zip(parts) {
            match segment {
                Segment::Literal(l) if l == part => {}
                Segment::Literal(_) => return None,
                Segment::Param(_) if part.is_empty() => return None,
                Segment::Param(name) => {
                    params.insert(name.clone(), percent_decode(part));
                }
            }
        }
        Some(params)
    }
}

fn operation(doc: &Value, template: &str, method: &str, op: &Value, shared: &[Value]) -> Operation {
    let parameters = shared
        .iter()
        .chain(op["parameters"].as_array().into_iter().flatten())
        .map(|p| {
            let p = resolve(doc, p, 0);
            Parameter {
                name: p["name"].as_str().unwrap_or("").to_string(),
                location: p["in"].as_str().unwrap_or("").to_string(),
                required: p["required"] == true,
                schema: p["schema"].clone(),
                deprecated: p["deprecated"] == true,
            }
        })
        .collect();
    let body = op.get("requestBody").map(|b| {
        let b = resolve(doc, b, 0);
        let schema = &b["content"]["application/json"]["schema"];
        (b["required"] == true, resolve(doc, schema, 0))
    });
    Operation {
        id: op["operationId"].as_str().unwrap_or("").to_string(),
        method: method.to_string(),
        template: template.to_string(),
        segments: template
            .trim_start_matches('/')
            .split('/')
            .map(
                |s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    Some(name) => Segment::Param(name.to_string()),
                    None => Segment::Literal(s.to_string()),
                },
            )
            .collect(),
        enabled_for_apps: op["x-github"]["enabledForGitHubApps"] != false,
        deprecated: op["deprecated"] == true,
        parameters,
        body,
    }
}

/// `value` with every `$ref` replaced by what it points at, and OpenAPI 3.0's `nullable: true`
/// written as JSON Schema's `"type": [T, "null"]`.
fn resolve(doc: &Value, value: &Value, depth: usize) -> Value {
    match value {
        Value::Object(map) => {
            if let Some(target) = map.get("$ref").and_then(Value::as_str) {
                if depth >= MAX_REF_DEPTH {
                    return json!({});
                }
                let pointer = target.trim_start_matches('#');
                return resolve(doc, doc.pointer(pointer).unwrap_or(&Value::Null), depth + 1);
            }
            let mut out = Map::new();
            for (k, v) in map {
                if k == "example" || k == "examples" || k == "description" {
                    continue;
                }
                out.insert(k.clone(), resolve(doc, v, depth));
            }
            if out.remove("nullable") == Some(Value::Bool(true))
                && let Some(t) = out.get("type").cloned()
            {
                out.insert("type".into(), json!([t, "null"]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| resolve(doc, v, depth)).collect()),
        other => other.clone(),
    }
}

/// Calls `found` with the path of every field of `value` that `schema` marks deprecated.
fn deprecated_fields(schema: &Value, value: &Value, at: &str, found: &mut dyn FnMut(String)) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let field = &schema["properties"][k];
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                if field["deprecated"] == true {
                    found(path.clone());
                }
                deprecated_fields(field, v, &path, found);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                deprecated_fields(&schema["items"], item, &format!("{at}[{i}]"), found);
            }
        }
        _ => {}
    }
}

/// Whether a path or query value fits a parameter's (scalar) schema.
fn scalar_fits(value: &str, schema: &Value) -> Result<(), String> {
    let typed = match schema["type"].as_str() {
        Some("integer") => value
            .parse::<i64>()
            .map(|n| json!(n))
            .map_err(|_| format!("is not an integer: `{value}`"))?,
        Some("boolean") => match value {
            "true" => json!(true),
            "false" => json!(false),
            _ => return Err(format!("is not a boolean: `{value}`")),
        },
        _ => json!(value),
    };
    if let Some(options) = schema["enum"].as_array()
        && !options.contains(&typed)
    {
        return Err(format!(
            "is not one of {}: `{value}`",
            Value::Array(options.clone())
        ));
    }
    Ok(())
}

fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn documentation(op: &Operation) -> String {
    format!("https://docs.github.com/rest/{}", op.id.replace('/', "#"))
}

fn not_found() -> Value {
    json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
}

/// GitHub's 422 for a request whose parameters or body do not fit the operation.
fn invalid(op: &Operation, detail: &str) -> Refusal {
    Refusal {
        status: 422,
        body: json!({
            "message": format!("Invalid request.\n\n{detail}"),
            "documentation_url": documentation(op),
            "status": "422",
        }),
        violation: format!("{}: {detail}", op.id),
    }
}
