//! The book's reference pages, rendered from the code so they cannot drift from it: the command
//! reference from clap's `--help` of every command, the configuration reference from the JSON
//! Schema of the config file's structs (their doc comments). The test `reference_pages` in
//! tests/integration/docs_reference.rs compares them with docs/src/reference/ and rewrites them
//! under `DEEP_REVIEW_BLESS=1`.

use serde_json::Value;

/// The first lines of every generated page: what made it and how to make it again.
fn generated_note(what: &str) -> String {
    format!(
        "<!-- Generated from {what}; do not edit. After changing it, run\n     \
         DEEP_REVIEW_BLESS=1 cargo nextest run -E 'test(reference_pages)'\n     \
         to rewrite this page. -->\n"
    )
}

/// docs/src/reference/commands.md: `deep-review --help`, then each command's `--help`.
pub fn commands_markdown() -> String {
    let mut cmd = super::command()
        .disable_help_subcommand(true)
        .term_width(100);
    cmd.build();
    let mut out = String::from("# Command reference\n\n");
    out.push_str(&generated_note("the command line's definition (src/cli/)"));
    out.push_str("\nEach command's `--help`, as the binary prints it.\n");
    push_help(&mut out, "deep-review", &mut cmd.clone());
    for sub in cmd.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let name = format!("deep-review {}", sub.get_name());
        push_help(&mut out, &name, &mut sub.clone());
    }
    out
}

/// One command's section: a heading and its long help as plain text, trailing blanks trimmed.
fn push_help(out: &mut String, name: &str, cmd: &mut clap::Command) {
    let help = cmd.render_long_help().to_string();
    let lines: Vec<&str> = help.lines().map(str::trim_end).collect();
    out.push_str(&format!("\n## `{name}`\n\n```text\n"));
    out.push_str(lines.join("\n").trim_end());
    out.push_str("\n```\n");
}

/// docs/src/reference/config.md: every key of a config file, its type and what it does, from
/// the schema of the structs the parser reads.
pub fn config_markdown() -> String {
    let schema = crate::config::schema();
    let root = schema.as_value();
    let mut out = String::from("# Configuration reference\n\n");
    out.push_str(&generated_note(
        "the config file's structs (src/config/file.rs)",
    ));
    out.push('\n');
    out.push_str(&description(root));
    out.push_str(
        "\n\nThe files, how they are merged and what trust changes: see \
         [Configuration](../configuration.md). `deep-review schema config` prints this as a JSON \
         Schema.\n\n## Top-level keys\n\n",
    );
    out.push_str(&key_table(root, root));
    for (key, property) in properties(root) {
        if let Some(table) = table_of(root, property) {
            out.push_str(&format!(
                "\n## `[{key}.NAME]`\n\n{}\n\n",
                description(table)
            ));
            out.push_str(&key_table(root, table));
        }
    }
    out
}

/// The properties of an object schema, in the order the struct declares them.
fn properties(schema: &Value) -> Vec<(&String, &Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|map| map.iter().collect())
        .unwrap_or_default()
}

/// The schema of the tables a map key holds (`[agents.NAME]`), when the key is such a map.
fn table_of<'a>(root: &'a Value, property: &'a Value) -> Option<&'a Value> {
    let reference = property
        .get("additionalProperties")?
        .get("$ref")?
        .as_str()?;
    let name = reference.strip_prefix("#/$defs/")?;
    root.get("$defs")?.get(name)
}

/// A table of an object's keys: name, type, and the doc comment as one line.
fn key_table(root: &Value, schema: &Value) -> String {
    let mut out = String::from("| key | type | what it does |\n|---|---|---|\n");
    for (key, property) in properties(schema) {
        let kind = type_name(root, property);
        let text = description(property).replace('|', "\\|");
        out.push_str(&format!("| `{key}` | {kind} | {text} |\n"));
    }
    out
}

/// A schema's description with its lines joined, as a table cell or a paragraph needs it.
fn description(schema: &Value) -> String {
    let text = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The TOML type a value of this schema has, in words.
fn type_name(root: &Value, schema: &Value) -> String {
    if table_of(root, schema).is_some() {
        return "tables".to_string();
    }
    let kinds: Vec<&str> = match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    match kinds.into_iter().find(|kind| *kind != "null") {
        Some("array") => format!("list of {}s", item_name(root, schema.get("items"))),
        Some("object") => format!(
            "table of {}s",
            item_name(root, schema.get("additionalProperties"))
        ),
        Some("number") => "number".to_string(),
        Some(kind) => kind.to_string(),
        None => "any".to_string(),
    }
}

/// The type of an array's items or a map's values.
fn item_name(root: &Value, schema: Option<&Value>) -> String {
    schema.map_or_else(|| "value".to_string(), |schema| type_name(root, schema))
}
