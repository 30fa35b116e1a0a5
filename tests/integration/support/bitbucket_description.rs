//! Bitbucket Cloud's API 2.0 as npm's `bitbucket` package describes it (its route table and
//! bitbucket.d.ts, written out by scripts/install-bitbucket-descriptions.sh): which routes
//! exist with which methods, and what the fields of a request body may hold. The fake
//! Bitbucket serves only described routes and refuses a body the description does not allow.

use std::collections::HashMap;

use serde_json::Value;

/// Where scripts/install-bitbucket-descriptions.sh put the description.
pub fn descriptions_file() -> std::path::PathBuf {
    if let Some(file) = std::env::var_os("DEEP_REVIEW_BITBUCKET_DESCRIPTIONS") {
        return file.into();
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    std::path::Path::new(&home)
        .join(".cache/deep-review/bitbucket-descriptions/bitbucket-2.12.0-api.json")
}

/// One route: its method, its URL template's segments and its parameters' types.
#[derive(Debug, Clone)]
pub struct Route {
    pub name: String,
    pub method: String,
    segments: Vec<String>,
    params: HashMap<String, String>,
}

/// The description: routes and object types.
pub struct Description {
    routes: Vec<Route>,
    types: Value,
}

impl Description {
    pub fn load() -> Description {
        let path = descriptions_file();
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "the fake Bitbucket checks requests against npm bitbucket's description, {} ({e}): run scripts/install-bitbucket-descriptions.sh",
                path.display()
            )
        });
        let doc: Value = serde_json::from_str(&text).expect("the description is JSON");
        let routes = doc["endpoints"]
            .as_array()
            .expect("endpoints")
            .iter()
            .map(|e| Route {
                name: e["name"].as_str().unwrap_or("").to_string(),
                method: e["method"].as_str().unwrap_or("GET").to_string(),
                segments: e["url"]
                    .as_str()
                    .unwrap_or("")
                    .trim_start_matches('/')
                    .split('/')
                    .map(str::to_string)
                    .collect(),
                params: e["params"]
                    .as_object()
                    .map(|p| {
                        p.iter()
                            .map(|(k, v)| (k.clone(), v["type"].as_str().unwrap_or("").into()))
                            .collect()
                    })
                    .unwrap_or_default(),
            })
            .collect();
        Description {
            routes,
            types: doc["types"].clone(),
        }
    }

    /// The route `method path` (path after `/2.0`) and its path parameters; `Err` with
    /// Bitbucket's status when there is none (404) or the method is not its (405), or an
    /// integer parameter is not one (404, as Bitbucket's router answers).
    pub fn route(&self, method: &str, path: &str) -> Result<(Route, HashMap<String, String>), u16> {
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let mut found_path = false;
        for route in &self.routes {
            let Some(params) = bind(&route.segments, &parts) else {
                continue;
            };
            let typed = params.iter().all(|(k, v)| {
                route
                    .params
                    .get(k)
                    .is_none_or(|t| t != "integer" || v.parse::<u64>().is_ok())
            });
            if !typed {
                continue;
            }
            found_path = true;
            if route.method == method {
                return Ok((route.clone(), params));
            }
        }
        Err(if found_path { 405 } else { 404 })
    }

    /// What is wrong with `value` as the object type `name` (fields of the wrong type, values
    /// not among those allowed, required fields missing), or `None`. Fields the type does not
    /// name are allowed, as bitbucket.d.ts's `[k: string]: unknown` says.
    pub fn check(&self, name: &str, value: &Value) -> Option<String> {
        let ty = &self.types[name];
        assert!(!ty.is_null(), "bitbucket.d.ts has no type {name}");
        if let Some(base) = ty["base"].as_str().filter(|b| *b != "Object")
            && let Some(problem) = self.check(base, value)
        {
            return Some(problem);
        }
        check_fields(&ty["fields"], value, name)
    }
}

/// `template`'s segments bound to `parts`: `{name}` takes one segment.
fn bind(template: &[String], parts: &[&str]) -> Option<HashMap<String, String>> {
    // A trailing `{spec}` takes the rest: `ws/slug:abc%0Ddef` names a commit of a repository.
    let spec_last = template.last().is_some_and(|t| t == "{spec}");
    let parts: Vec<String> = if spec_last && parts.len() > template.len() {
        let (head, rest) = parts.split_at(template.len() - 1);
        head.iter()
            .map(|p| p.to_string())
            .chain([rest.join("/")])
            .collect()
    } else {
        parts.iter().map(|p| p.to_string()).collect()
    };
    if template.len() != parts.len() {
        return None;
    }
    let mut params = HashMap::new();
    for (t, p) in template.iter().zip(parts) {
        if let Some(name) = t.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
            if p.is_empty() {
                return None;
            }
            params.insert(name.to_string(), p.clone());
        } else if t != &p {
            return None;
        }
    }
    Some(params)
}

fn check_fields(fields: &Value, value: &Value, at: &str) -> Option<String> {
    let Some(object) = value.as_object() else {
        return Some(format!("{at}: expected an object"));
    };
    let fields = fields.as_object()?;
    for (name, field) in fields {
        let here = format!("{at}.{name}");
        match object.get(name) {
            None | Some(Value::Null) if field["optional"] == false => {
                return Some(format!("{here}: required"));
            }
            None | Some(Value::Null) => {}
            Some(v) => {
                if let Some(problem) = check_value(field, v, &here) {
                    return Some(problem);
                }
            }
        }
    }
    None
}

fn check_value(field: &Value, v: &Value, here: &str) -> Option<String> {
    let ty = field["type"].as_str().unwrap_or("");
    let ok = match ty {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "enum" => field["values"]
            .as_array()
            .is_some_and(|vals| vals.contains(v)),
        "object" if field["fields"].as_object().is_some_and(|f| f.is_empty()) => true,
        "object" => return check_fields(&field["fields"], v, here),
        t if t.ends_with("[]") => v.is_array(),
        _ => true,
    };
    (!ok).then(|| format!("{here}: {v} is not a valid {ty}"))
}
