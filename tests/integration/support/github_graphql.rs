//! GitHub's GraphQL API as GitHub describes it: every document the fake GitHub receives is
//! parsed and validated against GitHub's schema (npm `@octokit/graphql-schema`, pinned and
//! installed by `scripts/install-github-descriptions.sh`) with apollo-compiler, its variables
//! coerced to their declared types, and then GitHub's own runtime rules are applied: every
//! connection asks for `first` or `last`, at most 100, and the whole query for at most 500,000
//! nodes. A refused document gets GitHub's answer (HTTP 200, `errors` and no `data`). A document
//! GitHub would run but that selects a deprecated field or argument is a conformance violation
//! that fails the test (`databaseId` is deprecated because it cannot hold ids past 2^31).
//!
//! A document that passes is executed by apollo-compiler's executor over the fake's data
//! ([`Object`]), so the answer has exactly the shape the document asked for (aliases,
//! fragments) and GitHub's types: an `Int` past 2^31 is a field error and `null`, as on GitHub.

use std::collections::HashMap;

use apollo_compiler::executable::{Field, Selection, SelectionSet};
use apollo_compiler::resolvers::{Execution, FieldError, ObjectValue, ResolveInfo, ResolvedValue};
use apollo_compiler::response::{JsonMap, JsonValue};
use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Node, Schema};
use serde_json::{Value, json};

/// GitHub's largest page of a connection.
pub const MAX_PAGE: i64 = 100;
/// GitHub's limit on the nodes one query may ask for.
pub const MAX_NODES: i64 = 500_000;

/// GitHub's schema, loaded once.
pub struct GraphqlSpec {
    schema: Valid<Schema>,
}

/// A document that GitHub would run.
pub struct Checked {
    pub document: Valid<ExecutableDocument>,
    pub variables: Valid<JsonMap>,
    /// `query` or `mutation`.
    pub kind: String,
    /// What GitHub runs but the schema says not to use: each fails the test.
    pub violations: Vec<String>,
}

/// A document GitHub refuses: its `errors`, and why the fake says it did.
#[derive(Debug)]
pub struct Refused {
    pub errors: Vec<Value>,
    pub violation: String,
}

impl GraphqlSpec {
    /// Reads `schema.graphql` of `@octokit/graphql-schema`.
    ///
    /// GitHub's published schema defines two fields of `EnterpriseOwnerInfo` twice (a defect of
    /// the published file, not of GitHub's server); those duplicates are the only errors
    /// accepted, anything else fails the load.
    pub fn load(path: &std::path::Path) -> Result<GraphqlSpec, String> {
        let sdl = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let schema = match Schema::parse_and_validate(&sdl, "schema.graphql") {
            Ok(schema) => schema,
            Err(with_errors) => {
                let others: Vec<String> = with_errors
                    .errors
                    .iter()
                    .map(|d| d.error.to_string())
                    .filter(|m| !m.starts_with("duplicate definitions for the"))
                    .collect();
                if !others.is_empty() {
                    return Err(format!(
                        "{} is not a valid schema: {}",
                        path.display(),
                        others.join("; ")
                    ));
                }
                Valid::assume_valid(with_errors.partial)
            }
        };
        Ok(GraphqlSpec { schema })
    }

    /// Validates `query` with `variables` as GitHub would before running it.
    pub fn check(&self, query: &str, variables: &Value) -> Result<Checked, Refused> {
        let document = ExecutableDocument::parse_and_validate(&self.schema, query, "query.graphql")
            .map_err(|with_errors| {
                let errors: Vec<Value> = with_errors
                    .errors
                    .iter()
                    .map(|d| serde_json::to_value(d.unstable_to_json_compat()).unwrap_or_default())
                    .collect();
                Refused {
                    violation: format!(
                        "the GraphQL document is not valid against GitHub's schema: {}",
                        errors
                            .iter()
                            .map(|e| e["message"].as_str().unwrap_or("").to_string())
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                    errors,
                }
            })?;
        let operation = document.operations.get(None).map_err(|e| Refused {
            errors: vec![json!({"message": e.message().to_string()})],
            violation: format!(
                "the GraphQL request names no single operation: {}",
                e.message()
            ),
        })?;
        let raw: JsonMap = match variables {
            Value::Null => JsonMap::new(),
            v => serde_json::from_value(v.clone()).map_err(|e| Refused {
                errors: vec![json!({"message": format!("Variables are invalid JSON: {e}")})],
                violation: format!("the GraphQL variables are not an object: {e}"),
            })?,
        };
        let coerced =
            apollo_compiler::request::coerce_variable_values(&self.schema, operation, &raw)
                .map_err(|e| {
                    let error = e.to_graphql_error(&document.sources);
                    Refused {
                        violation: format!("GraphQL variables refused: {}", error.message),
                        errors: vec![serde_json::to_value(error).unwrap_or_default()],
                    }
                })?;
        let mut rules = Rules {
            document: &document,
            variables: &coerced,
            errors: Vec::new(),
            violations: Vec::new(),
            nodes: 0,
        };
        rules.selection_set(&operation.selection_set, 1, &mut Vec::new());
        if rules.nodes > MAX_NODES {
            rules.errors.push(json!({
                "type": "MAX_NODE_LIMIT_EXCEEDED",
                "message": format!(
                    "This query requests up to {} possible nodes which exceeds the maximum limit of {MAX_NODES}.",
                    rules.nodes
                ),
            }));
        }
        if !rules.errors.is_empty() {
            return Err(Refused {
                violation: format!(
                    "GitHub refuses the query: {}",
                    rules
                        .errors
                        .iter()
                        .map(|e| e["message"].as_str().unwrap_or("").to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                errors: rules.errors,
            });
        }
        let kind = operation.operation_type.to_string();
        Ok(Checked {
            violations: rules.violations,
            kind,
            document,
            variables: coerced,
        })
    }

    /// Runs a checked document over `root` (the `Query` or `Mutation` object): GitHub's JSON
    /// answer, `data` and `errors`. Field errors whose message starts `TYPE: ` get GitHub's
    /// `type` (`FORBIDDEN`, `NOT_FOUND`).
    pub fn execute(&self, checked: &Checked, root: &dyn ObjectValue) -> Value {
        let execution = Execution::new(&self.schema, &checked.document)
            .coerced_variable_values(&checked.variables);
        let response = match execution.execute_sync(root) {
            Ok(response) => serde_json::to_value(response).unwrap_or_default(),
            Err(e) => {
                json!({"errors": [serde_json::to_value(e.to_graphql_error(&checked.document.sources)).unwrap_or_default()]})
            }
        };
        typed_errors(response)
    }
}

/// `"FORBIDDEN: text"` messages become `{"type": "FORBIDDEN", "message": "text"}`.
fn typed_errors(mut response: Value) -> Value {
    let errors = response.get_mut("errors").and_then(Value::as_array_mut);
    for error in errors.into_iter().flatten() {
        let message = error["message"].as_str().unwrap_or("").to_string();
        if let Some((kind, text)) = message.split_once(": ")
            && !kind.is_empty()
            && kind.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
        {
            error["type"] = json!(kind);
            error["message"] = json!(text);
        }
    }
    response
}

/// GitHub's rules beyond the schema, walked over one operation.
struct Rules<'a> {
    document: &'a Valid<ExecutableDocument>,
    variables: &'a Valid<JsonMap>,
    errors: Vec<Value>,
    violations: Vec<String>,
    nodes: i64,
}

impl Rules<'_> {
    /// `multiplier`: how many parents each field here is selected for (the product of the
    /// page sizes of the connections above); `path`: response keys down to here.
    fn selection_set(&mut self, set: &SelectionSet, multiplier: i64, path: &mut Vec<String>) {
        for selection in &set.selections {
            match selection {
                Selection::Field(field) => self.field(&set.ty, field, multiplier, path),
                Selection::InlineFragment(inline) => {
                    self.selection_set(&inline.selection_set, multiplier, path)
                }
                Selection::FragmentSpread(spread) => {
                    if let Some(fragment) = self.document.fragments.get(&spread.fragment_name) {
                        self.selection_set(&fragment.selection_set, multiplier, path);
                    }
                }
            }
        }
    }

    fn field(
        &mut self,
        parent: &str,
        field: &Node<Field>,
        multiplier: i64,
        path: &mut Vec<String>,
    ) {
        if field.name.starts_with("__") {
            return;
        }
        let definition = &field.definition;
        if let Some(deprecated) = definition.directives.get("deprecated") {
            self.violations.push(format!(
                "`{parent}.{}` is deprecated in GitHub's schema: {}",
                field.name,
                reason(deprecated)
            ));
        }
        for argument in &field.arguments {
            if let Some(def) = definition.argument_by_name(&argument.name)
                && let Some(deprecated) = def.directives.get("deprecated")
            {
                self.violations.push(format!(
                    "argument `{}` of `{parent}.{}` is deprecated in GitHub's schema: {}",
                    argument.name,
                    field.name,
                    reason(deprecated)
                ));
            }
        }
        path.push(field.response_key().to_string());
        let mut inner = multiplier;
        if definition.ty.inner_named_type().ends_with("Connection") {
            let first = self.argument(field, "first");
            let last = self.argument(field, "last");
            let name = field.name.as_str();
            let location = location(field, self.document);
            match (first, last) {
                (None, None) => self.errors.push(json!({
                    "type": "MISSING_PAGINATION_BOUNDARIES",
                    "path": path.clone(),
                    "locations": location,
                    "message": format!("You must provide a `first` or `last` value to properly paginate the `{name}` connection."),
                })),
                (Some(_), Some(_)) => self.errors.push(json!({
                    "type": "EXCESSIVE_PAGINATION",
                    "path": path.clone(),
                    "locations": location,
                    "message": format!("Passing both `first` and `last` to paginate the `{name}` connection is not supported."),
                })),
                (Some(n), None) | (None, Some(n)) => {
                    let which = if first.is_some() { "first" } else { "last" };
                    if !(0..=MAX_PAGE).contains(&n) {
                        self.errors.push(json!({
                            "type": "EXCESSIVE_PAGINATION",
                            "path": path.clone(),
                            "locations": location,
                            "message": format!("Requesting {n} records on the `{name}` connection exceeds the `{which}` limit of {MAX_PAGE} records."),
                        }));
                    }
                    inner = multiplier.saturating_mul(n.max(0));
                    self.nodes = self.nodes.saturating_add(inner);
                }
            }
        }
        self.selection_set(&field.selection_set, inner, path);
        path.pop();
    }

    /// An Int argument's value, literal or from a variable; `None` when absent or null.
    fn argument(&self, field: &Field, name: &str) -> Option<i64> {
        let value = field.specified_argument_by_name(name)?;
        match value.as_ref() {
            apollo_compiler::ast::Value::Int(i) => i.as_str().parse().ok(),
            apollo_compiler::ast::Value::Variable(v) => {
                self.variables.get(v.as_str()).and_then(|j| j.as_i64())
            }
            _ => None,
        }
    }
}

fn reason(directive: &apollo_compiler::ast::Directive) -> String {
    directive
        .specified_argument_by_name("reason")
        .and_then(|v| v.as_str())
        .unwrap_or("No longer supported")
        .to_string()
}

fn location(field: &Node<Field>, document: &ExecutableDocument) -> Value {
    match field.line_column_range(&document.sources) {
        Some(range) => json!([{"line": range.start.line, "column": range.start.column}]),
        None => json!([]),
    }
}

/// A value of the fake's data as GraphQL resolves it.
#[derive(Clone, Debug)]
pub enum Data {
    /// A scalar or enum value (JSON), or null.
    Leaf(Value),
    Object(Object),
    List(Vec<Data>),
    /// A connection over these nodes: paginated by `first`/`last`/`after`/`before` into
    /// `nodes`, `edges`, `pageInfo` and `totalCount`, as GitHub does, pages cut at the second
    /// value (the fake's page size, so that tests see several pages of a few items).
    Connection(Vec<Object>, usize),
    /// A field with arguments (`repository(owner:, name:)`): the first entry whose arguments
    /// all equal the request's, else the field error.
    ByArguments(Vec<(Value, Data)>, String),
}

/// An object of the fake's data: its GraphQL type and its fields.
#[derive(Clone, Debug, Default)]
pub struct Object {
    pub type_name: String,
    pub fields: HashMap<String, Data>,
}

impl Object {
    pub fn new(type_name: &str) -> Object {
        Object {
            type_name: type_name.to_string(),
            fields: HashMap::new(),
        }
    }

    /// Sets a scalar field.
    pub fn with(mut self, name: &str, value: Value) -> Object {
        self.fields.insert(name.to_string(), Data::Leaf(value));
        self
    }

    pub fn with_data(mut self, name: &str, data: Data) -> Object {
        self.fields.insert(name.to_string(), data);
        self
    }
}

impl ObjectValue for Object {
    fn type_name(&self) -> &str {
        &self.type_name
    }

    fn resolve_field<'a>(
        &'a self,
        info: &'a ResolveInfo<'a>,
    ) -> Result<ResolvedValue<'a>, FieldError> {
        match self.fields.get(info.field_name()) {
            Some(data) => resolve(data, info),
            None => Err(FieldError {
                message: format!(
                    "the fake GitHub has no value for `{}.{}`: add it to the fake",
                    self.type_name,
                    info.field_name()
                ),
            }),
        }
    }
}

fn resolve<'a>(data: &'a Data, info: &'a ResolveInfo<'a>) -> Result<ResolvedValue<'a>, FieldError> {
    match data {
        Data::Leaf(v) => Ok(ResolvedValue::Leaf(to_json(v))),
        Data::Object(o) => Ok(ResolvedValue::Object(Box::new(o.clone()))),
        Data::List(items) => Ok(ResolvedValue::List(Box::new(
            items.iter().map(move |d| resolve(d, info)),
        ))),
        Data::Connection(nodes, cap) => Ok(ResolvedValue::Object(Box::new(connection(
            nodes,
            *cap,
            info.arguments(),
            info.field_definition().ty.inner_named_type(),
        )))),
        Data::ByArguments(entries, missing) => {
            let args = info.arguments();
            let found = entries.iter().find(|(want, _)| {
                want.as_object()
                    .into_iter()
                    .flatten()
                    .all(|(k, v)| args.get(k.as_str()).is_some_and(|got| from_json(got) == *v))
            });
            match found {
                Some((_, d)) => resolve(d, info),
                None => Err(FieldError {
                    message: missing.clone(),
                }),
            }
        }
    }
}

/// One page of `nodes`, as GitHub's cursor connections give it.
fn connection(nodes: &[Object], cap: usize, args: &JsonMap, type_name: &str) -> Object {
    let arg = |name: &str| args.get(name).map(from_json).unwrap_or(Value::Null);
    let cursor_index = |v: Value| -> Option<usize> {
        v.as_str()
            .and_then(|c| c.strip_prefix("Y3Vyc29yOnYyOp"))
            .and_then(|n| n.parse().ok())
    };
    let mut start = cursor_index(arg("after")).map(|i| i + 1).unwrap_or(0);
    let mut end = cursor_index(arg("before"))
        .unwrap_or(nodes.len())
        .min(nodes.len());
    start = start.min(end);
    if let Some(first) = arg("first").as_u64() {
        end = end.min(start + (first as usize).min(cap));
    }
    if let Some(last) = arg("last").as_u64() {
        start = start.max(end.saturating_sub((last as usize).min(cap)));
    }
    let cursor = |i: usize| json!(format!("Y3Vyc29yOnYyOp{i}"));
    let page: Vec<(usize, &Object)> = (start..end).map(|i| (i, &nodes[i])).collect();
    Object::new(type_name)
        .with("totalCount", json!(nodes.len()))
        .with_data(
            "nodes",
            Data::List(
                page.iter()
                    .map(|(_, o)| Data::Object((*o).clone()))
                    .collect(),
            ),
        )
        .with_data(
            "edges",
            Data::List(
                page.iter()
                    .map(|(i, o)| {
                        Data::Object(
                            Object::new(&type_name.replace("Connection", "Edge"))
                                .with("cursor", cursor(*i))
                                .with_data("node", Data::Object((*o).clone())),
                        )
                    })
                    .collect(),
            ),
        )
        .with_data(
            "pageInfo",
            Data::Object(
                Object::new("PageInfo")
                    .with("hasNextPage", json!(end < nodes.len()))
                    .with("hasPreviousPage", json!(start > 0))
                    .with(
                        "startCursor",
                        if page.is_empty() {
                            Value::Null
                        } else {
                            cursor(start)
                        },
                    )
                    .with(
                        "endCursor",
                        if page.is_empty() {
                            Value::Null
                        } else {
                            cursor(end - 1)
                        },
                    ),
            ),
        )
}

pub fn to_json(v: &Value) -> JsonValue {
    serde_json::from_value(v.clone()).unwrap_or(JsonValue::Null)
}

pub fn from_json(v: &JsonValue) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}
