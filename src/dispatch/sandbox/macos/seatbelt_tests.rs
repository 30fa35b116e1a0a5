//! The Seatbelt profile against the policy, checked on any platform: parsed as S-expressions
//! (with `lexpr`), every rule compared with what the grants and the egress allow. The checker
//! is written from the policy, not from the renderer, and the tests make sure it refuses a
//! profile that allows more (each mutation below is a way a renderer could go wrong).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lexpr::Value;

use super::seatbelt::{BASE, Profile, SANDBOX_EXEC, canonical};
use crate::dispatch::sandbox::policy::{Egress, Grants};

/// Operations the profile may allow with no filter: they are bounded by the others (an `exec`
/// needs the file to be readable; a fork stays in the sandbox; processor facts).
const UNFILTERED_OK: &[&str] = &["process-exec", "process-fork", "mach-host*"];

/// The filters the base profile may name itself, for reading: the system's own files, the
/// links on the way to `/private`, and single devices; no user data, not `/dev` as a whole.
const BASE_READS: &[&str] = &[
    r#"(subpath "/System")"#,
    r#"(subpath "/Library/Apple")"#,
    r#"(subpath "/private/var/db/timezone")"#,
    r#"(subpath "/private/var/db/dyld")"#,
    r#"(literal "/")"#,
    r#"(literal "/private/etc/localtime")"#,
    r#"(subpath "/Library/Preferences/Logging")"#,
    r#"(literal "/etc")"#,
    r#"(literal "/tmp")"#,
    r#"(literal "/var")"#,
    r#"(literal "/private")"#,
    r#"(literal "/private/var")"#,
    r#"(literal "/dev/null")"#,
    r#"(literal "/dev/zero")"#,
    r#"(literal "/dev/random")"#,
    r#"(literal "/dev/urandom")"#,
    r#"(subpath "/dev/fd")"#,
];

/// Metadata only (`stat`): the `/dev` directory itself.
const BASE_METADATA: &[&str] = &[r#"(literal "/dev")"#];

/// What the base profile may let the agent write: the null devices and its own descriptors.
const BASE_WRITES: &[&str] = &[
    r#"(literal "/dev/null")"#,
    r#"(literal "/dev/zero")"#,
    r#"(subpath "/dev/fd")"#,
];

/// The policy of a typical agent, with paths that exist on any machine.
fn policy(dir: &Path) -> (Grants, Egress) {
    let grants = Grants {
        read: vec![
            "/usr".into(),
            "/etc".into(),
            "/proc".into(),
            "/dev".into(),
            dir.join("checkout"),
        ],
        write: vec![dir.join("scratch"), dir.join("home")],
        write_files: vec!["/dev/null".into()],
        sockets: vec![dir.join("agent.sock")],
    };
    let egress = Egress::ProxyOnly {
        proxy: 41_234,
        forwarded: vec![11_434],
    };
    (grants, egress)
}

/// The profile's forms, or why it does not parse.
fn forms(text: &str) -> Result<Vec<Value>, String> {
    let mut parser = lexpr::Parser::from_str(text);
    let mut out = Vec::new();
    while let Some(value) = parser
        .next_value()
        .map_err(|e| format!("not an S-expression: {e}"))?
    {
        out.push(value);
    }
    Ok(out)
}

/// Whether `value` is the form `text`.
fn is(value: &Value, text: &str) -> bool {
    lexpr::from_str(text).is_ok_and(|form| form == *value)
}

/// The items of a list form.
fn items(value: &Value) -> Vec<&Value> {
    value.list_iter().map(|i| i.collect()).unwrap_or_default()
}

fn symbol(value: &Value) -> Option<&str> {
    value.as_symbol()
}

/// A filter's path: a string, or a `(param NAME)` looked up in `params`.
fn filter_path(value: &Value, params: &BTreeMap<String, PathBuf>) -> Option<PathBuf> {
    if let Some(s) = value.as_str() {
        return Some(PathBuf::from(s));
    }
    let list = items(value);
    match (list.first().and_then(|v| symbol(v)), list.get(1)) {
        (Some("param"), Some(name)) => params.get(name.as_str()?).cloned(),
        _ => None,
    }
}

/// The paths of a file filter (`subpath`, `literal`, `require-all` with `require-not`s): the
/// allowed ones; `None` for a filter the checker does not know (which is refused).
fn filter_paths(filter: &Value, params: &BTreeMap<String, PathBuf>) -> Option<Vec<PathBuf>> {
    let list = items(filter);
    match list.first().and_then(|v| symbol(v)) {
        Some("subpath" | "literal") if list.len() == 2 => Some(vec![filter_path(list[1], params)?]),
        Some("require-all") => {
            // The first part allows, the others may only take away.
            let first = filter_paths(list.get(1)?, params)?;
            for part in &list[2..] {
                if items(part).first().and_then(|v| symbol(v)) != Some("require-not") {
                    return None;
                }
            }
            Some(first)
        }
        _ => None,
    }
}

/// Every way the profile allows more than `grants` and `egress`, or fails to allow what they
/// grant. Empty: the profile is the policy.
fn check(profile: &Profile, grants: &Grants, egress: &Egress) -> Vec<String> {
    let forms = match forms(&profile.text) {
        Ok(forms) => forms,
        Err(e) => return vec![e],
    };
    let params: BTreeMap<String, PathBuf> = profile.params.iter().cloned().collect();
    let mut wrong = Vec::new();
    let heads: Vec<String> = forms.iter().take(2).map(|f| f.to_string()).collect();
    if heads != ["(version 1)", "(deny default)"] {
        wrong.push(format!("the profile does not start closed: {heads:?}"));
    }
    let mut seen = Seen::default();
    for form in &forms {
        let list = items(form);
        match list.first().and_then(|v| symbol(v)) {
            Some("version") => {}
            Some("deny") if is(form, "(deny default)") => {}
            Some("allow") => {
                check_allow(&list[1..], &params, grants, egress, &mut seen, &mut wrong)
            }
            _ => wrong.push(format!("unknown form {form}")),
        }
    }
    wrong.extend(seen.missing(grants, egress));
    wrong
}

/// What the profile was found to allow, to check that every grant is there.
#[derive(Default)]
struct Seen {
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    ports: Vec<String>,
    sockets: Vec<PathBuf>,
}

impl Seen {
    fn missing(&self, grants: &Grants, egress: &Egress) -> Vec<String> {
        let mut missing = Vec::new();
        let linux_only = |p: &PathBuf| p.starts_with("/dev") || p.starts_with("/proc");
        for path in grants.read.iter().filter(|p| !linux_only(p)) {
            if !self.read.contains(&canonical(path)) {
                missing.push(format!("{} is not readable", path.display()));
            }
        }
        for path in grants.write.iter().chain(&grants.write_files) {
            let real = canonical(path);
            if !self.write.contains(&real) && real != Path::new("/dev/null") {
                missing.push(format!("{} is not writable", path.display()));
            }
        }
        for port in egress.tcp_ports().unwrap_or_default() {
            if !self.ports.contains(&format!("localhost:{port}")) {
                missing.push(format!("port {port} is not reachable"));
            }
        }
        for socket in &grants.sockets {
            if !self.sockets.contains(&canonical(socket)) {
                missing.push(format!("socket {} is not reachable", socket.display()));
            }
        }
        missing
    }
}

/// One `(allow OPERATION... FILTER...)`.
fn check_allow(
    rest: &[&Value],
    params: &BTreeMap<String, PathBuf>,
    grants: &Grants,
    egress: &Egress,
    seen: &mut Seen,
    wrong: &mut Vec<String>,
) {
    let operations: Vec<&str> = rest.iter().map_while(|v| symbol(v)).collect();
    let filters = &rest[operations.len()..];
    let rule = format!("(allow {} ...)", operations.join(" "));
    if operations.is_empty() || operations.contains(&"default") {
        wrong.push(format!("{rule}: allows by default"));
        return;
    }
    if filters.is_empty() {
        if !operations.iter().all(|op| UNFILTERED_OK.contains(op)) {
            wrong.push(format!("{rule}: unrestricted"));
        }
        return;
    }
    for op in &operations {
        match *op {
            op if op.starts_with("file-write") => {
                check_writes(&rule, filters, params, grants, seen, wrong)
            }
            "file-read*" | "file-read-data" | "file-read-metadata" | "file-map-executable" => {
                check_reads(&rule, op, filters, params, grants, seen, wrong)
            }
            "network-outbound" => {
                check_network(&rule, filters, params, grants, egress, seen, wrong)
            }
            "mach-lookup" => check_each(&rule, filters, wrong, |f| {
                let l = items(f);
                l.len() == 2 && symbol(l[0]) == Some("global-name") && l[1].as_str().is_some()
            }),
            "signal" | "process-info*" => {
                check_each(&rule, filters, wrong, |f| is(f, "(target same-sandbox)"))
            }
            "sysctl-read" => check_each(&rule, filters, wrong, |f| {
                let l = items(f);
                let name = l.get(1).and_then(|v| v.as_str()).unwrap_or("");
                match l.first().and_then(|v| symbol(v)) {
                    Some("sysctl-name") => !name.starts_with("kern.proc"),
                    Some("sysctl-name-prefix") => ["hw.", "machdep."]
                        .iter()
                        .any(|p| name.starts_with(p) && name.len() > 3),
                    _ => false,
                }
            }),
            "system-socket" => check_each(&rule, filters, wrong, |f| {
                is(f, "(socket-domain AF_UNIX)") && !grants.sockets.is_empty()
            }),
            other => wrong.push(format!("{rule}: {other} is not an operation of the policy")),
        }
    }
}

fn check_each(
    rule: &str,
    filters: &[&Value],
    wrong: &mut Vec<String>,
    ok: impl Fn(&Value) -> bool,
) {
    for filter in filters {
        if !ok(filter) {
            wrong.push(format!("{rule}: {filter} is broader than the policy"));
        }
    }
}

fn check_writes(
    rule: &str,
    filters: &[&Value],
    params: &BTreeMap<String, PathBuf>,
    grants: &Grants,
    seen: &mut Seen,
    wrong: &mut Vec<String>,
) {
    let writable: Vec<PathBuf> = grants
        .write
        .iter()
        .chain(&grants.write_files)
        .map(|p| canonical(p))
        .collect();
    for filter in filters {
        let text = filter.to_string();
        if BASE_WRITES.contains(&text.as_str()) {
            continue;
        }
        let paths = filter_paths(filter, params).unwrap_or_default();
        // A granted path comes as a parameter; a string in the filter is not the policy's.
        let granted = |p: &PathBuf| text.contains("(param ") && writable.contains(p);
        if paths.is_empty() || !paths.iter().all(granted) {
            wrong.push(format!("{rule}: {filter} writes outside the write roots"));
        }
        seen.write.extend(paths);
    }
}

fn check_reads(
    rule: &str,
    op: &str,
    filters: &[&Value],
    params: &BTreeMap<String, PathBuf>,
    grants: &Grants,
    seen: &mut Seen,
    wrong: &mut Vec<String>,
) {
    let granted: Vec<PathBuf> = grants
        .read
        .iter()
        .chain(&grants.write)
        .chain(&grants.write_files)
        .chain(&grants.sockets)
        .map(|p| canonical(p))
        .collect();
    for filter in filters {
        let text = filter.to_string();
        if BASE_READS.contains(&text.as_str())
            || (op == "file-read-metadata" && BASE_METADATA.contains(&text.as_str()))
        {
            continue;
        }
        let paths = filter_paths(filter, params).unwrap_or_default();
        let literal = items(filter).first().and_then(|v| symbol(v)) == Some("literal");
        // A granted path comes as a parameter; a string in the filter is not the policy's.
        let by_param = text.contains("(param ");
        let ok = |p: &PathBuf| {
            by_param && granted.contains(p)
                // Metadata of a directory above a grant: a name on the way, not its contents.
                || (op == "file-read-metadata" && literal && granted.iter().any(|g| g.starts_with(p)))
        };
        if paths.is_empty() || !paths.iter().all(ok) {
            wrong.push(format!("{rule}: {filter} reads outside the read roots"));
        }
        if op == "file-read*" {
            seen.read.extend(paths);
        }
    }
}

fn check_network(
    rule: &str,
    filters: &[&Value],
    params: &BTreeMap<String, PathBuf>,
    grants: &Grants,
    egress: &Egress,
    seen: &mut Seen,
    wrong: &mut Vec<String>,
) {
    let ports: Vec<String> = egress
        .tcp_ports()
        .unwrap_or_default()
        .iter()
        .map(|p| format!("localhost:{p}"))
        .collect();
    let sockets: Vec<PathBuf> = grants.sockets.iter().map(|p| canonical(p)).collect();
    for filter in filters {
        let list = items(filter);
        let kind = (
            list.first().and_then(|v| symbol(v)),
            list.get(1).and_then(|v| symbol(v)),
        );
        let ok = match kind {
            (Some("remote"), Some("ip")) => {
                let address = list.get(2).and_then(|v| v.as_str()).unwrap_or("");
                seen.ports.push(address.to_string());
                ports.iter().any(|p| p == address) || (*egress == Egress::Open && address == "*:*")
            }
            (Some("remote"), Some("unix-socket")) => {
                let path = list
                    .get(2)
                    .and_then(|f| filter_paths(f, params))
                    .unwrap_or_default();
                seen.sockets.extend(path.iter().cloned());
                let resolver = *egress == Egress::Open
                    && path == [PathBuf::from("/private/var/run/mDNSResponder")];
                !path.is_empty() && (path.iter().all(|p| sockets.contains(p)) || resolver)
            }
            _ => false,
        };
        if !ok {
            wrong.push(format!(
                "{rule}: {filter} connects beyond the proxy and the sockets"
            ));
        }
    }
}

#[test]
fn the_profile_is_the_policy_and_no_more() {
    let dir = tempfile::tempdir().unwrap();
    let (grants, egress) = policy(dir.path());
    let profile = Profile::with_masked(&grants, &egress, &["/etc/sudoers".into()]);
    assert_eq!(
        check(&profile, &grants, &egress),
        Vec::<String>::new(),
        "{}",
        profile.text
    );
    assert!(profile.text.starts_with(BASE));
    assert!(profile.text.contains("(remote ip \"localhost:41234\")"));
    assert!(profile.text.contains("(remote ip \"localhost:11434\")"));
    // The masked file is carved out of the read root that holds it.
    assert!(
        profile
            .text
            .contains("(require-not (subpath (param \"MASKED_"),
        "{}",
        profile.text
    );
    // Linux's /proc and /dev are not granted as such on macOS (raw disks live in /dev).
    let named: Vec<&PathBuf> = profile.params.iter().map(|(_, p)| p).collect();
    assert!(
        !named
            .iter()
            .any(|p| p.starts_with("/proc") || p.as_path() == Path::new("/dev"))
    );
}

/// Each mutation is a profile that allows more than the policy: the checker must see it.
#[test]
fn the_checker_refuses_a_profile_that_allows_more() {
    let dir = tempfile::tempdir().unwrap();
    let (grants, egress) = policy(dir.path());
    let good = Profile::with_masked(&grants, &egress, &[]);
    type Mutation = Box<dyn Fn(&str) -> String>;
    let mutations: Vec<(&str, Mutation)> = vec![
        (
            "allow default",
            Box::new(|t: &str| format!("{t}\n(allow default)")),
        ),
        (
            "open by default",
            Box::new(|t: &str| t.replacen("(deny default)", "(allow default)", 1)),
        ),
        (
            "write everywhere",
            Box::new(|t: &str| format!("{t}\n(allow file-write* (subpath \"/\"))")),
        ),
        (
            "write a home",
            Box::new(|t: &str| format!("{t}\n(allow file-write* (subpath \"/Users\"))")),
        ),
        (
            "unfiltered write",
            Box::new(|t: &str| format!("{t}\n(allow file-write-data)")),
        ),
        (
            "read a home",
            Box::new(|t: &str| format!("{t}\n(allow file-read* (subpath \"/Users\"))")),
        ),
        (
            "read /dev",
            Box::new(|t: &str| format!("{t}\n(allow file-read* (subpath \"/dev\"))")),
        ),
        (
            "any host",
            Box::new(|t: &str| t.replace("localhost:41234", "*:443")),
        ),
        (
            "any port",
            Box::new(|t: &str| t.replace("localhost:41234", "localhost:*")),
        ),
        (
            "all network",
            Box::new(|t: &str| format!("{t}\n(allow network-outbound)")),
        ),
        (
            "every unix socket",
            Box::new(|t: &str| format!("{t}\n(allow network-outbound (remote unix-socket))")),
        ),
        (
            "listening",
            Box::new(|t: &str| format!("{t}\n(allow network-bind (local ip \"*:*\"))")),
        ),
        (
            "any mach service",
            Box::new(|t: &str| format!("{t}\n(allow mach-lookup)")),
        ),
        (
            "mach prefix",
            Box::new(|t: &str| {
                format!("{t}\n(allow mach-lookup (global-name-prefix \"com.apple\"))")
            }),
        ),
        (
            "signal anyone",
            Box::new(|t: &str| t.replace("(allow signal (target same-sandbox))", "(allow signal)")),
        ),
        (
            "others' processes",
            Box::new(|t: &str| format!("{t}\n(allow process-info* (target others))")),
        ),
        (
            "process list",
            Box::new(|t: &str| {
                format!("{t}\n(allow sysctl-read (sysctl-name-prefix \"kern.proc.\"))")
            }),
        ),
        (
            "not parsed",
            Box::new(|t: &str| format!("{t}\n(allow file-read* (subpath \"/x\")")),
        ),
    ];
    for (name, mutate) in mutations {
        let bad = Profile {
            text: mutate(&good.text),
            params: good.params.clone(),
        };
        assert_ne!(bad.text, good.text, "{name}: the mutation changed nothing");
        assert!(
            !check(&bad, &grants, &egress).is_empty(),
            "{name}: the checker let it through"
        );
    }
}

/// A profile that leaves out a grant is refused too: every rule the policy implies is there.
#[test]
fn the_checker_refuses_a_profile_that_leaves_out_a_grant() {
    let dir = tempfile::tempdir().unwrap();
    let (grants, egress) = policy(dir.path());
    let profile = Profile::with_masked(&grants, &egress, &[]);
    let mut fewer = grants.clone();
    fewer.write.push(dir.path().join("cache"));
    assert!(
        check(&profile, &fewer, &egress)
            .iter()
            .any(|w| w.contains("not writable"))
    );
    let other_port = Egress::ProxyOnly {
        proxy: 5,
        forwarded: vec![],
    };
    assert!(!check(&profile, &grants, &other_port).is_empty());
}

/// A path with quotes, spaces, backslashes, parentheses and non-ASCII never enters the
/// profile's text: it is a parameter, passed as it is.
#[test]
fn paths_are_parameters_never_text() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = dir.path().join("a \"b\" \\c ) (allow default) é日本");
    std::fs::create_dir_all(&hostile).unwrap();
    let grants = Grants {
        read: vec![hostile.clone()],
        write: vec![hostile.join("w\"x")],
        write_files: vec![],
        sockets: vec![],
    };
    let egress = Egress::ProxyOnly {
        proxy: 3128,
        forwarded: vec![],
    };
    let profile = Profile::with_masked(&grants, &egress, &[]);
    assert!(!profile.text.contains("日本"), "{}", profile.text);
    assert!(!profile.text.contains("(allow default)"));
    assert_eq!(check(&profile, &grants, &egress), Vec::<String>::new());
    let read = &profile
        .params
        .iter()
        .find(|(n, _)| n.starts_with("READ"))
        .unwrap()
        .1;
    assert_eq!(*read, canonical(&hostile));
    let args = profile.command_args("/opt/agent", &["-p".into(), "x y".into()]);
    assert_eq!(args[0], "-p");
    assert_eq!(args[1], profile.text.as_str());
    let define = args
        .iter()
        .find(|a| a.to_string_lossy().starts_with("-DREAD_"))
        .unwrap();
    let mut want = std::ffi::OsString::from(format!(
        "-D{}=",
        profile
            .params
            .iter()
            .find(|(n, _)| n.starts_with("READ"))
            .unwrap()
            .0
    ));
    want.push(canonical(&hostile).as_os_str());
    assert_eq!(*define, want);
    let dashes = args.iter().position(|a| a == "--").unwrap();
    assert_eq!(
        &args[dashes + 1..],
        ["/opt/agent", "-p", "x y"].map(std::ffi::OsString::from)
    );
    assert_eq!(SANDBOX_EXEC, "/usr/bin/sandbox-exec");
}

/// Paths are named as a Mac opens them: links resolved, `/var`, `/tmp` and `/etc` under
/// `/private`, including a path that does not exist yet.
#[test]
fn paths_are_canonical() {
    assert_eq!(
        canonical(Path::new("/var/folders/x/T")),
        Path::new("/private/var/folders/x/T")
    );
    assert_eq!(
        canonical(Path::new("/tmp/not/yet")),
        Path::new("/private/tmp/not/yet")
    );
    assert_eq!(
        canonical(Path::new("/etc/hosts")),
        Path::new("/private/etc/hosts")
    );
    assert_eq!(
        canonical(Path::new("/private/tmp")),
        Path::new("/private/tmp")
    );
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
    let through = canonical(&dir.path().join("link/new"));
    assert!(through.ends_with("real/new"), "{}", through.display());
}

/// An open network reaches any address (and the resolver), still no other UNIX socket.
#[test]
fn an_open_network_allows_ip_and_no_other_socket() {
    let dir = tempfile::tempdir().unwrap();
    let (mut grants, _) = policy(dir.path());
    grants.sockets.clear();
    let profile = Profile::with_masked(&grants, &Egress::Open, &[]);
    assert_eq!(
        check(&profile, &grants, &Egress::Open),
        Vec::<String>::new()
    );
    assert!(profile.text.contains("(remote ip \"*:*\")"));
    assert!(!profile.text.contains("system-socket"));
    let filtered = Egress::ProxyOnly {
        proxy: 1,
        forwarded: vec![],
    };
    assert!(
        !check(&profile, &grants, &filtered).is_empty(),
        "open is more than the proxy"
    );
}
