//! The release server and the runners of install_release's tests: a GitHub-release-shaped folder
//! served from 127.0.0.1, the Action's install step taken from action.yml as the runner takes it,
//! and the copy of the install script in the GitLab template.

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Response, StatusCode};
use sha2::{Digest, Sha256};
use tempfile::TempDir;

use crate::install_release::{built_binary, script};
use crate::support::http_server::Server;

/// The release tag of the version this test build is.
pub fn tag_of_this_build() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

/// dist's target for this machine, as the install script picks it.
fn target_triple() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-musl",
        ("linux", "aarch64") => "aarch64-unknown-linux-musl",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        other => panic!("no release target for {other:?}"),
    }
}

/// One release, served as GitHub serves release assets: `GET /TAG/NAME`.
pub struct Release {
    pub tag: String,
    dir: TempDir,
    requests: Arc<Mutex<Vec<String>>>,
    server: Server,
}

/// A git repository whose tag names the release: `released` is the tagged commit, `later` one
/// after it (an action used at `later` has no release).
pub struct TaggedRepo {
    pub dir: TempDir,
    pub released: String,
    pub later: String,
}

pub struct StepRun {
    pub output: Output,
    pub github_output: String,
}

impl Release {
    /// Packs this build's binary as dist does and serves it under `tag`.
    pub fn serve(tag: &str) -> Release {
        let dir = TempDir::new().unwrap();
        std::fs::create_dir_all(dir.path().join(tag)).unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let root = dir.path().to_path_buf();
        let seen = requests.clone();
        let server = Server::start("release server", move |req, _| {
            let root = root.clone();
            let seen = seen.clone();
            async move { Ok::<_, Infallible>(serve_file(&root, req.method(), req.uri().path(), &seen)) }
        });
        let release = Release {
            tag: tag.to_string(),
            dir,
            requests,
            server,
        };
        let binary = std::fs::read(built_binary()).unwrap();
        release.pack(&binary);
        let sum = format!("{}  {}\n", release.archive_sha256(), release.archive_name());
        release.write_checksums(&sum);
        release
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.server.addr)
    }

    pub fn archive_name(&self) -> String {
        format!("deep-review-{}.tar.gz", target_triple())
    }

    pub fn archive_path(&self) -> String {
        format!("/{}/{}", self.tag, self.archive_name())
    }

    /// The paths asked for so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// The release's sha256.sum (dist lists every archive in it).
    pub fn write_checksums(&self, text: &str) {
        std::fs::write(self.dir.path().join(&self.tag).join("sha256.sum"), text).unwrap();
    }

    /// Swaps the archive's binary for `content`, leaving the checksums as they were.
    pub fn replace_binary_after_checksums(&self, content: &str) {
        self.pack(content.as_bytes());
    }

    /// `deep-review-TARGET.tar.gz` holding `deep-review-TARGET/{deep-review,README.md,
    /// install-agent-clis.sh}` (dist-workspace.toml's `include`), and its
    /// `.sha256`, as dist packs a Unix target.
    fn pack(&self, binary: &[u8]) {
        let stem = format!("deep-review-{}", target_triple());
        let stage = TempDir::new().unwrap();
        let inner = stage.path().join(&stem);
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(inner.join("deep-review"), binary).unwrap();
        make_executable(&inner.join("deep-review"));
        std::fs::write(inner.join("README.md"), "# deep-review\n").unwrap();
        let agents = repo_root().join("scripts/install-agent-clis.sh");
        std::fs::copy(agents, inner.join("install-agent-clis.sh")).unwrap();
        let archive = self.dir.path().join(&self.tag).join(self.archive_name());
        // gzip's fastest level: the debug binary is some 80 MB, and the format is the same.
        let status = Command::new("tar")
            .arg("--use-compress-program=gzip -1")
            .arg("-cf")
            .arg(&archive)
            .arg("-C")
            .arg(stage.path())
            .arg(&stem)
            .status()
            .unwrap();
        assert!(status.success(), "tar -czf {}", archive.display());
        let line = format!("{}  {}\n", self.archive_sha256(), self.archive_name());
        std::fs::write(archive.with_extension("gz.sha256"), line).unwrap();
    }

    fn archive_sha256(&self) -> String {
        let bytes =
            std::fs::read(self.dir.path().join(&self.tag).join(self.archive_name())).unwrap();
        hex::encode(Sha256::digest(&bytes))
    }

    /// A repository with the release's tag (annotated, as `git tag -a` makes) on one commit and
    /// a commit after it.
    pub fn tagged_repo(&self) -> TaggedRepo {
        let dir = TempDir::new().unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@localhost",
                    "-c",
                    "tag.gpgSign=false",
                ])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        git(&["init", "-q", "-b", "main"]);
        let manifest = format!(
            "[package]\nname = \"deep-review\"\nversion = \"{}\"\n",
            &self.tag[1..]
        );
        std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
        git(&["add", "Cargo.toml"]);
        git(&["commit", "-q", "-m", "release"]);
        git(&["tag", "-a", "-m", "release", &self.tag]);
        let released = git(&["rev-parse", "HEAD"]);
        git(&["commit", "-q", "--allow-empty", "-m", "after the release"]);
        let later = git(&["rev-parse", "HEAD"]);
        TaggedRepo {
            dir,
            released,
            later,
        }
    }
}

fn serve_file(
    root: &Path,
    method: &Method,
    path: &str,
    seen: &Mutex<Vec<String>>,
) -> Response<Full<Bytes>> {
    seen.lock().unwrap().push(path.to_string());
    let respond = |status: StatusCode, body: Vec<u8>| {
        Response::builder()
            .status(status)
            .body(Full::new(Bytes::from(body)))
            .unwrap()
    };
    if method != Method::GET {
        return respond(StatusCode::METHOD_NOT_ALLOWED, Vec::new());
    }
    let relative = path.trim_start_matches('/');
    if relative
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return respond(StatusCode::NOT_FOUND, b"Not Found".to_vec());
    }
    match std::fs::read(root.join(relative)) {
        Ok(bytes) => respond(StatusCode::OK, bytes),
        Err(_) => respond(StatusCode::NOT_FOUND, b"Not Found".to_vec()),
    }
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs the install script against `release` with `args` then `dest`.
pub fn run_script(release: &Release, args: &[&str], dest: &Path) -> Output {
    Command::new("bash")
        .arg(script())
        .args(args)
        .arg(dest)
        .env("DEEP_REVIEW_RELEASE_URL", release.url())
        .env_remove("DEEP_REVIEW_RELEASE_REPO")
        .output()
        .unwrap()
}

/// Runs action.yml's install step as the runner does (`bash -e` with its `env:`), the action
/// being this checkout used at `action_ref`, with HOME at `home`.
pub fn action_install_step(
    release: &Release,
    repo: &TaggedRepo,
    action_ref: &str,
    home: &Path,
) -> StepRun {
    let action = std::fs::read_to_string(repo_root().join("action.yml")).unwrap();
    let step = run_block(&action, "Install deep-review's release binary");
    let scratch = TempDir::new().unwrap();
    let step_file = scratch.path().join("step.sh");
    std::fs::write(&step_file, step).unwrap();
    let github_output = scratch.path().join("github_output");
    std::fs::write(&github_output, "").unwrap();
    let output = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&step_file)
        .env("ACTION_PATH", repo_root())
        .env("ACTION_REF", action_ref)
        .env("ACTION_REPOSITORY", "deep-review/deep-review")
        .env("SERVER_URL", "https://github.invalid")
        .env("DEEP_REVIEW_RELEASE_URL", release.url())
        .env("DEEP_REVIEW_RELEASE_REPO", repo.dir.path())
        .env("GITHUB_OUTPUT", &github_output)
        .env("HOME", home)
        .output()
        .unwrap();
    let github_output = std::fs::read_to_string(&github_output).unwrap();
    StepRun {
        output,
        github_output,
    }
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `run: |` script of the composite step named `name`, without its indentation.
fn run_block(action: &str, name: &str) -> String {
    let lines: Vec<&str> = action.lines().collect();
    let step = lines
        .iter()
        .position(|l| l.trim() == format!("- name: {name}"))
        .unwrap_or_else(|| panic!("action.yml has no step named {name:?}"));
    let run = step
        + lines[step..]
            .iter()
            .position(|l| l.trim() == "run: |")
            .unwrap_or_else(|| panic!("the step {name:?} has no `run: |`"));
    let indent = lines[run].len() - lines[run].trim_start().len();
    let body = lines[run + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent);
    dedent(body.copied(), indent + 2)
}

/// The script in the GitLab template's `<<'INSTALL_RELEASE'` heredoc.
pub fn embedded_script(template: &str) -> String {
    let lines: Vec<&str> = template.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains("<<'INSTALL_RELEASE'"))
        .expect("templates/deep-review.yml has no <<'INSTALL_RELEASE' heredoc");
    let indent = lines[start].len() - lines[start].trim_start().len();
    let body = lines[start + 1..]
        .iter()
        .take_while(|l| l.trim() != "INSTALL_RELEASE");
    dedent(body.copied(), indent)
}

fn dedent<'a>(lines: impl Iterator<Item = &'a str>, indent: usize) -> String {
    let mut text = String::new();
    for line in lines {
        text.push_str(line.get(indent..).unwrap_or(""));
        text.push('\n');
    }
    text
}
