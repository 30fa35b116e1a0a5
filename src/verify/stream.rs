//! Many files searched on every core, their answers taken in file order.
//!
//! A search of the whole tree reads every blob once: one `git cat-file --batch` pass is the
//! floor the benchmark holds it to. The blobs are read in process from the repository's
//! object store when it gives what git gives ([`ObjectStore`]), by every worker at once, each
//! with its own reader (inflating a 50,000-file tree took 0.47 s of CPU, git 1.23 s); anything
//! the store does not hold is asked of the worker's `cat-file`. Otherwise one thread reads
//! them from one `cat-file --batch --buffer`, asked for in one write and read in large pieces,
//! and hands them to a worker per core as they arrive. Either way the workers' answers are put
//! back in file order before anyone sees them, so what a search finds (the first file holding
//! a quote, the first line adding a name) is the same on one core or many, and it stops as
//! soon as the answers taken so far say it is done.
//!
//! In `run`, the head's files may instead come from the checkout deep-review made for the
//! agents ([`Blobs::Checkout`]): a file is used only when its bytes hash to the blob id the
//! head tree lists for its path (the name git gives those exact bytes), so it is the commit's
//! file whatever happened to the checkout; any other (a symlink, a smudge filter's or an
//! end-of-line conversion's output, a file that is not there) is read from git.

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};

use anyhow::{Context, Result};

use super::git::{CatFile, MAX_SCAN_BLOB, read_blob, spawn_cat_file};
use super::objects::{BlobReader, Lookup, ObjectStore};

/// Where the blobs of a search come from.
#[derive(Debug, Clone, Copy)]
pub enum Blobs<'a> {
    /// The repository's objects: read in process from its object store when there is one that
    /// gives what git gives ([`ObjectStore`]), else through `git cat-file --batch`.
    Git {
        repo: &'a Path,
        store: Option<&'a ObjectStore>,
    },
    /// A checkout of head that deep-review made itself and no agent could write; files whose
    /// bytes do not hash to their blob id are read from git in `repo`.
    Checkout { dir: &'a Path, repo: &'a Path },
}

/// One file to search: a path of it (read from a checkout), its blob id and tree mode.
#[derive(Debug, Clone, Copy)]
pub struct FileRef<'a> {
    pub path: &'a str,
    pub oid: &'a str,
    pub mode: &'a str,
}

/// Bytes read from cat-file's pipe at a time.
const READ_BUFFER: usize = 1 << 20;

/// Batches read ahead of the workers, beside one per worker: enough to keep them busy. A batch
/// can hold one blob of up to [`MAX_SCAN_BLOB`], so what is in flight is at most
/// `READ_AHEAD + workers + 1` batches: a few per core, not a multiple of the cores.
const READ_AHEAD: usize = 4;

/// A batch handed to a worker holds about this many bytes of blobs, or [`BATCH_FILES`] files.
const BATCH_BYTES: usize = 256 * 1024;
const BATCH_FILES: usize = 256;

/// Blobs read from git, handed to a worker together: their bytes one after another in one
/// buffer, and each file's index in the files searched with where its bytes are (`None`: no
/// blob, or one too large).
///
/// One buffer, given back to the reader once searched ([`from_git`]) and filled again, rather
/// than a vector per blob allocated on the reader's thread and freed on a worker's, which left
/// the reader taking fresh memory (and its page faults) as the tree went by.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    blobs: Vec<(usize, Option<std::ops::Range<usize>>)>,
}

impl Batch {
    fn clear(&mut self) {
        self.bytes.clear();
        self.blobs.clear();
    }
}

/// Searches every file of `files` with `search` on every core and gives each answer to `apply`
/// in file order (`None`: no blob, or one over [`MAX_SCAN_BLOB`]), until `apply` returns
/// `false` or the files end.
pub fn search_in_order<R: Send>(
    blobs: Blobs<'_>,
    files: &[FileRef<'_>],
    search: impl Fn(usize, &[u8]) -> R + Sync,
    apply: impl FnMut(usize, Option<R>) -> bool,
) -> Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    let workers = std::thread::available_parallelism().map_or(2, usize::from);
    match blobs {
        Blobs::Git {
            repo,
            store: Some(store),
        } => from_store(store, repo, files, workers, &search, apply),
        Blobs::Git { repo, store: None } => from_git(repo, files, workers, &search, apply),
        Blobs::Checkout { dir, repo } => from_checkout(dir, repo, files, workers, &search, apply),
    }
}

/// Puts answers that arrive in any order back in file order.
struct InOrder<R> {
    next: usize,
    waiting: BTreeMap<usize, Option<R>>,
}

impl<R> InOrder<R> {
    fn new() -> Self {
        InOrder {
            next: 0,
            waiting: BTreeMap::new(),
        }
    }

    /// Takes answer `i`; gives `apply` every answer now in order. `false` when `apply` said
    /// stop.
    fn take(
        &mut self,
        i: usize,
        answer: Option<R>,
        apply: &mut impl FnMut(usize, Option<R>) -> bool,
    ) -> bool {
        self.waiting.insert(i, answer);
        while let Some(answer) = self.waiting.remove(&self.next) {
            let at = self.next;
            self.next += 1;
            if !apply(at, answer) {
                return false;
            }
        }
        true
    }
}

/// One `cat-file --batch --buffer`: a writer asks for every blob in one buffer, a reader
/// hands the blobs to the workers, this thread applies their answers in order.
fn from_git<R: Send>(
    repo: &Path,
    files: &[FileRef<'_>],
    workers: usize,
    search: &(impl Fn(usize, &[u8]) -> R + Sync),
    mut apply: impl FnMut(usize, Option<R>) -> bool,
) -> Result<()> {
    let (child, stdin, stdout) = spawn_cat_file(repo, &["--buffer"])?;
    widen_pipe(&stdout);
    let child = Mutex::new(child);
    let stop = AtomicBool::new(false);
    let halt = || {
        stop.store(true, Ordering::Relaxed);
        // cat-file ends: the writer and the reader, blocked on its pipes, return.
        let _ = child.lock().map(|mut c| c.kill());
    };
    let (blob_tx, blob_rx) = mpsc::sync_channel::<Batch>(READ_AHEAD + workers);
    let blob_rx = Mutex::new(blob_rx);
    let (answer_tx, answer_rx) = mpsc::channel::<Vec<(usize, Option<R>)>>();
    let (spare_tx, spare_rx) = mpsc::channel::<Batch>();
    let read = std::thread::scope(|scope| -> Result<()> {
        scope.spawn(move || write_requests(stdin, files));
        // The reader owns the sending end: when it ends, the workers' channel closes.
        let stop_reading = &stop;
        let reader =
            scope.spawn(move || read_batches(stdout, files, stop_reading, blob_tx, spare_rx));
        for _ in 0..workers {
            let (answer_tx, spare_tx) = (answer_tx.clone(), spare_tx.clone());
            let (blob_rx, stop) = (&blob_rx, &stop);
            scope.spawn(move || search_batches(blob_rx, stop, search, answer_tx, spare_tx));
        }
        drop(answer_tx);
        let mut in_order = InOrder::new();
        'answers: for answers in answer_rx.iter() {
            for (i, answer) in answers {
                if !in_order.take(i, answer, &mut apply) {
                    halt();
                    break 'answers;
                }
            }
        }
        drop(answer_rx);
        let outcome = reader
            .join()
            .map_err(|_| anyhow::anyhow!("the git cat-file reader panicked"))?;
        if stop.load(Ordering::Relaxed) {
            return Ok(()); // stopped early: the reader's broken pipe is no error
        }
        outcome
    });
    halt();
    if let Ok(mut c) = child.lock() {
        let _ = c.wait();
    }
    read.context("could not read the files through git cat-file")
}

/// Asks cat-file for every blob in one write; closing stdin then tells it it has them all.
fn write_requests(mut stdin: std::process::ChildStdin, files: &[FileRef<'_>]) {
    let mut requests = Vec::with_capacity(files.len() * 41);
    for f in files {
        requests.extend_from_slice(f.oid.as_bytes());
        requests.push(b'\n');
    }
    let _ = stdin.write_all(&requests);
}

/// Reads the blobs cat-file gives, in file order, and sends them to the workers in batches of
/// about [`BATCH_BYTES`]: one hand-over (and one wake-up) per batch, not per file. Searched
/// batches come back on `spare_rx` to be filled again. Ends at the last file, when `stop` is
/// set, or when the workers are gone.
fn read_batches(
    stdout: std::process::ChildStdout,
    files: &[FileRef<'_>],
    stop: &AtomicBool,
    blob_tx: mpsc::SyncSender<Batch>,
    spare_rx: mpsc::Receiver<Batch>,
) -> Result<()> {
    let mut reader = BufReader::with_capacity(READ_BUFFER, LetFill::new(stdout));
    let mut batch = Batch::default();
    for (i, f) in files.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let start = batch.bytes.len();
        let blob = read_blob(&mut reader, f.oid, &mut batch.bytes)?;
        batch
            .blobs
            .push((i, blob.then_some(start..batch.bytes.len())));
        if batch.bytes.len() + 64 * batch.blobs.len() >= BATCH_BYTES
            || batch.blobs.len() >= BATCH_FILES
        {
            let mut next = spare_rx.try_recv().unwrap_or_default();
            next.clear();
            if blob_tx.send(std::mem::replace(&mut batch, next)).is_err() {
                return Ok(());
            }
        }
    }
    if !batch.blobs.is_empty() {
        let _ = blob_tx.send(batch);
    }
    Ok(())
}

/// A worker: takes batches until the reader ends, searching none once stopped (the reader is
/// never left blocked on a full channel), sends each batch's answers on and the batch back.
fn search_batches<R>(
    blob_rx: &Mutex<mpsc::Receiver<Batch>>,
    stop: &AtomicBool,
    search: &(impl Fn(usize, &[u8]) -> R + Sync),
    answer_tx: mpsc::Sender<Vec<(usize, Option<R>)>>,
    spare_tx: mpsc::Sender<Batch>,
) {
    loop {
        let next = blob_rx.lock().map(|rx| rx.recv());
        let Ok(Ok(batch)) = next else { break };
        let answers: Vec<(usize, Option<R>)> = batch
            .blobs
            .iter()
            .map(|(i, blob)| match blob {
                Some(range) if !stop.load(Ordering::Relaxed) => {
                    (*i, Some(search(*i, &batch.bytes[range.clone()])))
                }
                _ => (*i, None),
            })
            .collect();
        let _ = spare_tx.send(batch);
        let _ = answer_tx.send(answers);
    }
}

/// Files read from the checkout by every worker, each checked against its blob id.
fn from_checkout<R: Send>(
    dir: &Path,
    repo: &Path,
    files: &[FileRef<'_>],
    workers: usize,
    search: &(impl Fn(usize, &[u8]) -> R + Sync),
    apply: impl FnMut(usize, Option<R>) -> bool,
) -> Result<()> {
    // A worker's `cat-file`, started only when a file of the checkout is not its blob.
    let start = || None::<CatFile>;
    let read = |git: &mut Option<CatFile>, file: &FileRef<'_>, bytes: &mut Vec<u8>| {
        Ok(fill(bytes, checked_file(dir, repo, file, git)?))
    };
    pooled(files, workers, start, read, search, apply)
}

/// Blobs read in process from the object store by every worker, each with its own reader;
/// what the store does not hold is asked of the worker's `cat-file`.
fn from_store<R: Send>(
    store: &ObjectStore,
    repo: &Path,
    files: &[FileRef<'_>],
    workers: usize,
    search: &(impl Fn(usize, &[u8]) -> R + Sync),
    apply: impl FnMut(usize, Option<R>) -> bool,
) -> Result<()> {
    let start = || (store.reader(), None::<CatFile>);
    let read = |(reader, git): &mut (Option<BlobReader>, Option<CatFile>),
                file: &FileRef<'_>,
                bytes: &mut Vec<u8>| {
        match reader.as_mut().map(|r| r.read(file.oid, bytes)) {
            Some(Lookup::Blob) => return Ok(true),
            Some(Lookup::Skipped) => return Ok(false),
            Some(Lookup::Unknown) | None => {}
        }
        Ok(fill(bytes, from_cat_file(repo, git, file.oid)?))
    };
    pooled(files, workers, start, read, search, apply)
}

/// Puts what a read gave into the worker's buffer: `false` when it gave no blob to search.
fn fill(bytes: &mut Vec<u8>, read: Option<Vec<u8>>) -> bool {
    match read {
        Some(read) => {
            *bytes = read;
            true
        }
        None => false,
    }
}

/// Files read and searched by every worker, each with its own state from `start` (a reader,
/// a `cat-file` started when needed) and one buffer it fills with `read` (`false`: no blob to
/// search); the answers applied in file order on this thread.
fn pooled<R: Send, S>(
    files: &[FileRef<'_>],
    workers: usize,
    start: impl Fn() -> S + Sync,
    read: impl Fn(&mut S, &FileRef<'_>, &mut Vec<u8>) -> Result<bool> + Sync,
    search: &(impl Fn(usize, &[u8]) -> R + Sync),
    mut apply: impl FnMut(usize, Option<R>) -> bool,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (answer_tx, answer_rx) = mpsc::channel::<Result<Vec<(usize, Option<R>)>>>();
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..workers {
            let answer_tx = answer_tx.clone();
            let (next, stop, start, read) = (&next, &stop, &start, &read);
            scope.spawn(move || {
                let mut state = start();
                let mut bytes = Vec::new();
                // Files are taken BATCH_FILES at a time: one hand-over per batch.
                loop {
                    let first = next.fetch_add(BATCH_FILES, Ordering::Relaxed);
                    if first >= files.len() || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let batch: Result<Vec<(usize, Option<R>)>> = (first
                        ..(first + BATCH_FILES).min(files.len()))
                        .map(|i| {
                            read(&mut state, &files[i], &mut bytes)
                                .map(|found| (i, found.then(|| search(i, &bytes))))
                        })
                        .collect();
                    if answer_tx.send(batch).is_err() {
                        break;
                    }
                }
            });
        }
        drop(answer_tx);
        let mut in_order = InOrder::new();
        for answers in answer_rx.iter() {
            let answers = match answers {
                Ok(a) => a,
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            };
            for (i, answer) in answers {
                if !in_order.take(i, answer, &mut apply) {
                    stop.store(true, Ordering::Relaxed);
                    return Ok(());
                }
            }
        }
        Ok(())
    })
}

/// The bytes of `file` at head: the checkout's file when it is a regular file whose bytes
/// hash to the blob id, else the blob from git. `None` for a missing blob or one over
/// [`MAX_SCAN_BLOB`].
fn checked_file(
    dir: &Path,
    repo: &Path,
    file: &FileRef<'_>,
    git: &mut Option<CatFile>,
) -> Result<Option<Vec<u8>>> {
    let regular = matches!(file.mode, "100644" | "100755");
    if regular {
        let path = dir.join(file.path);
        let is_file = std::fs::symlink_metadata(&path)
            .is_ok_and(|m| m.file_type().is_file() && m.len() <= MAX_SCAN_BLOB as u64);
        if is_file
            && let Ok(bytes) = std::fs::read(&path)
            && blob_id_matches(&bytes, file.oid)
        {
            return Ok(Some(bytes));
        }
    }
    from_cat_file(repo, git, file.oid)
}

/// The blob `oid` from `git` (started on first use), `None` when it is missing, not a blob, or
/// over [`MAX_SCAN_BLOB`].
fn from_cat_file(repo: &Path, git: &mut Option<CatFile>, oid: &str) -> Result<Option<Vec<u8>>> {
    let cat = match git {
        Some(cat) => cat,
        None => git.insert(CatFile::start(repo)?),
    };
    Ok(cat.read(oid)?.filter(|b| b.len() <= MAX_SCAN_BLOB))
}

/// Whether `bytes` are the blob git names `oid`: SHA-1 (or, in a SHA-256 repository, SHA-256)
/// of `blob <length>\0` and the bytes.
pub fn blob_id_matches(bytes: &[u8], oid: &str) -> bool {
    use sha2::Digest as _;
    fn hex_eq(digest: &[u8], oid: &str) -> bool {
        hex::encode(digest).eq_ignore_ascii_case(oid)
    }
    let header = format!("blob {}\0", bytes.len());
    match oid.len() {
        40 => {
            let mut h = sha1::Sha1::new();
            h.update(header.as_bytes());
            h.update(bytes);
            hex_eq(&h.finalize(), oid)
        }
        64 => {
            let mut h = sha2::Sha256::new();
            h.update(header.as_bytes());
            h.update(bytes);
            hex_eq(&h.finalize(), oid)
        }
        _ => false,
    }
}

/// A read from a pipe shorter than this lets the pipe fill before the next one ([`LetFill`]).
const SHORT_READ: usize = 64 * 1024;

/// How long a reader that is ahead of git waits for the pipe to fill: at the speed git
/// inflates blobs (about 100 MB/s on one core) a tenth of [`READ_BUFFER`] or so, far from the
/// pipe's capacity, so git never waits on it.
const FILL_WAIT: std::time::Duration = std::time::Duration::from_micros(750);

/// Reads a pipe that git writes in small pieces (`cat-file` writes each blob, about 2 kB,
/// with a system call or two), waiting a moment after a short read instead of at once asking
/// again. A reader always waiting on the pipe was woken, and switched to, for every one of
/// git's writes: 97,000 wake-ups for one pass over a 50,000-file tree, a third of the search's
/// CPU time on two cores. Waiting only when the reader is ahead of git costs no throughput:
/// git goes on writing into the widened pipe ([`widen_pipe`]) meanwhile.
struct LetFill<R> {
    inner: R,
    wait: bool,
}

impl<R> LetFill<R> {
    fn new(inner: R) -> Self {
        LetFill { inner, wait: false }
    }
}

impl<R: std::io::Read> std::io::Read for LetFill<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.wait {
            std::thread::sleep(FILL_WAIT);
        }
        let n = self.inner.read(buf)?;
        self.wait = n > 0 && n < SHORT_READ.min(buf.len());
        Ok(n)
    }
}

/// Asks the kernel for a 1 MB pipe from cat-file (64 kB by default): fewer wake-ups of the
/// reader and of git per megabyte. Refused (an unprivileged limit) changes nothing else.
/// Linux's alone (`F_SETPIPE_SZ`); elsewhere the pipe keeps its size.
#[cfg(target_os = "linux")]
fn widen_pipe(stdout: &std::process::ChildStdout) {
    use std::os::fd::AsRawFd;
    // SAFETY: F_SETPIPE_SZ on a pipe we own; failure is reported and ignored.
    unsafe {
        libc::fcntl(
            stdout.as_raw_fd(),
            libc::F_SETPIPE_SZ,
            READ_BUFFER as libc::c_int,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn widen_pipe(_stdout: &std::process::ChildStdout) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids_are_git_s() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert!(blob_id_matches(
            b"hello\n",
            "ce013625030ba8dba906f756967f9e9ca394464a"
        ));
        assert!(!blob_id_matches(
            b"hello\r\n",
            "ce013625030ba8dba906f756967f9e9ca394464a"
        ));
        assert!(!blob_id_matches(b"hello\n", "not-an-id"));
    }

    #[test]
    fn a_pipe_read_in_short_pieces_is_read_whole_and_waits_only_after_short_reads() {
        // A reader that gives at most 3 bytes a call, as a pipe does when git writes little.
        struct Trickle<'a>(&'a [u8]);
        impl std::io::Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(3).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let text: Vec<u8> = (0..100u8).collect();
        let mut reader = LetFill::new(Trickle(&text));
        let mut first = [0u8; 16];
        assert_eq!(std::io::Read::read(&mut reader, &mut first).unwrap(), 3);
        assert!(
            reader.wait,
            "a short read lets the pipe fill before the next"
        );
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut reader, &mut rest).unwrap();
        assert_eq!([&first[..3], &rest[..]].concat(), text);
        assert!(!reader.wait, "the end of the pipe is not waited on");
    }

    /// Every file's answer through each way of reading blobs: (index, bytes searched).
    fn read_all(blobs: Blobs<'_>, files: &[FileRef<'_>]) -> Vec<(usize, Option<Vec<u8>>)> {
        let mut seen = Vec::new();
        search_in_order(
            blobs,
            files,
            |_, bytes| bytes.to_vec(),
            |i, bytes| {
                seen.push((i, bytes));
                true
            },
        )
        .expect("the search runs");
        seen
    }

    #[test]
    fn the_object_store_and_cat_file_give_the_same_blobs_in_the_same_order() {
        use crate::verify::objects::tests::{git, repo_with};
        let texts: Vec<(String, Vec<u8>)> = (0..300)
            .map(|k| (format!("f{k}.go"), format!("package p{k}\n").into_bytes()))
            .collect();
        let files: Vec<(&str, &[u8])> = texts
            .iter()
            .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
            .collect();
        let dir = repo_with(&files);
        let git = |args: &[&str]| git(dir.path(), args);
        git(&["gc", "-q"]);
        let oids: Vec<String> = (0..300)
            .map(|k| git(&["rev-parse", &format!("HEAD:f{k}.go")]))
            .chain([
                git(&["rev-parse", "HEAD^{tree}"]),                // not a blob
                "0123456789012345678901234567890123456789".into(), // missing
            ])
            .collect();
        let files: Vec<FileRef<'_>> = oids
            .iter()
            .map(|oid| FileRef {
                path: "",
                oid,
                mode: "100644",
            })
            .collect();
        let store = ObjectStore::of(dir.path()).expect("a plain SHA-1 repository");
        let in_process = read_all(
            Blobs::Git {
                repo: dir.path(),
                store: Some(&store),
            },
            &files,
        );
        let piped = read_all(
            Blobs::Git {
                repo: dir.path(),
                store: None,
            },
            &files,
        );
        assert_eq!(in_process, piped);
        assert_eq!(in_process.len(), 302);
        assert_eq!(in_process[7], (7, Some(b"package p7\n".to_vec())));
        assert_eq!(in_process[300], (300, None), "a tree is not searched");
        assert_eq!(in_process[301], (301, None), "nor is a missing object");
    }

    #[test]
    fn answers_are_applied_in_order() {
        let mut seen = Vec::new();
        let mut apply = |i: usize, a: Option<u32>| {
            seen.push((i, a));
            i < 2
        };
        let mut in_order = InOrder::new();
        assert!(in_order.take(1, Some(10), &mut apply));
        assert!(in_order.take(2, None, &mut apply));
        assert!(!in_order.take(0, Some(5), &mut apply), "stops after 2");
        assert_eq!(seen, [(0, Some(5)), (1, Some(10)), (2, None)]);
    }
}
