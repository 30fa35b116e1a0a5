//! One finding checked against the code: path, lines, quote, history, and a comment in the code
//! that marks the issue as known.

use std::rc::Rc;

use anyhow::Result;

use super::history;
use super::known_issue;
use super::lookups::{Lookups, Search};
use super::quote::prose::{Messages, reads_as_prose};
use super::quote::{FileText, Quote};
use super::source::{Content, RepoSnapshot, Resolution, Resolved, Side};
use crate::types::ChangeKind;
use crate::types::{Category, Finding, Location, Verification, VerificationStatus};

/// How much text (see [`Quote::weight`]) a quote needs before it may move a finding to
/// another file.
const MIN_QUOTE_WEIGHT: usize = 24;

/// At most this many commits' messages are read to tell a quoted commit message from code.
const MAX_COMMITS_READ: &str = "2000";

/// Checks findings one by one against a [`RepoSnapshot`], sharing what it learns across findings:
/// file contents, the answers of the searches beyond the cited files ([`Lookups`]), the
/// change's commit messages.
pub struct Checker {
    pub src: RepoSnapshot,
    pub lookups: Lookups,
    messages: Option<Messages>,
}

/// A cited location that resolved to a file, with the lines the reviewer gave.
struct CitedFile {
    index: usize,
    side: Side,
    path: String,
    content: Rc<Content>,
}

/// Where the quote was found.
struct Found {
    index: usize,
    path: String,
    span: (u32, u32),
}

/// The cited paths resolved.
#[derive(Default)]
struct Cited {
    targets: Vec<CitedFile>,
    /// Indices of locations that lead to no file.
    unresolved: Vec<usize>,
    /// A bare name several files fit, and the quote is in more than one of them.
    ambiguous_quote: bool,
}

/// What the cited lines gave.
struct Lines {
    ok: bool,
    /// A cited file is binary or a submodule.
    opaque_file: bool,
    /// "binary file: ..." / "submodule: ...": said when it matters (a quote or lines).
    opaque_note: Option<String>,
}

/// What the quote gave.
#[derive(Default)]
struct QuoteCheck {
    ok: Option<bool>,
    found: Option<Found>,
    /// Found at the cited lines (or where no lines were cited): the lines stay.
    in_place: bool,
    relocated: bool,
    /// Found only in the merge-base version of a cited file.
    from_base: bool,
    /// The quote is not code (a commit message, prose), so it was not checked.
    not_code: bool,
}

impl Checker {
    pub fn new(src: RepoSnapshot) -> Self {
        Checker {
            src,
            lookups: Lookups::default(),
            messages: None,
        }
    }

    /// Reads, in one pass through `cat-file`, every file the findings cite: at head (or at the
    /// base when deleted, every candidate of an ambiguous name when there is a quote to tell
    /// them apart), and the base versions the pre-existing check compares. Nothing else: the
    /// changed files and the tree are searched only for what the checks ask ([`Lookups`]).
    pub fn prefetch<'a>(&mut self, findings: impl Iterator<Item = &'a Finding>) -> Result<()> {
        let mut wanted: Vec<(Side, String)> = Vec::new();
        for f in findings {
            let regression = f.category == Some(Category::Regression);
            let quoted = f.code.is_some();
            for loc in &f.locations {
                match self.src.resolve(&loc.path).resolved {
                    Resolved::Head(p) => {
                        if regression
                            && let Some(c) = self.src.changed_file(&p)
                            && !matches!(c.kind, ChangeKind::Added | ChangeKind::Copied)
                        {
                            let base_path = c.old_path.clone().unwrap_or_else(|| c.path.clone());
                            wanted.push((Side::Base, base_path));
                        }
                        wanted.push((Side::Head, p));
                    }
                    Resolved::Deleted(p) => wanted.push((Side::Base, p)),
                    Resolved::Ambiguous(paths) if quoted => {
                        wanted.extend(paths.into_iter().map(|p| (Side::Head, p)));
                    }
                    _ => {}
                }
            }
        }
        self.src.prefetch(wanted)
    }

    /// Checks finding number `index` (its key for [`Lookups`]): path, lines, quote, history,
    /// rewriting its locations where the check corrected them. Symbols are added afterwards.
    pub fn check(&mut self, index: usize, f: &mut Finding) -> Result<Verification> {
        let quote = f.code.as_ref().and_then(|c| Quote::parse(&c.code));
        if f.locations.is_empty() && quote.is_none() {
            return Ok(Verification::unchecked(
                "no location or quoted code to check",
            ));
        }
        for loc in &mut f.locations {
            normalize_location(loc);
        }
        let mut notes: Vec<String> = Vec::new();

        let cited = self.resolve_paths(f, quote.as_ref(), &mut notes)?;
        let lines = check_lines(f, &cited, &mut notes);
        let mut qc =
            self.quote_if_checkable(index, f, quote.as_ref(), &cited, &lines, &mut notes)?;
        move_to_quote(f, &mut qc, &mut notes);

        let path_ok =
            cited.unresolved.is_empty() && (!cited.targets.is_empty() || qc.found.is_some());
        let status = status_of(&qc, &cited, &lines, path_ok, quote.is_some());
        let grounded = matches!(
            status,
            VerificationStatus::Grounded | VerificationStatus::Relocated
        );
        // The grounded lines at head: where the quote is, else the first cited lines.
        let span = if grounded && !qc.from_base {
            self.head_span(f, &cited, qc.found.as_ref())
        } else {
            None
        };

        // Step 4: pre-existing, and whether the location is in the change at all.
        let mut pre_existing = false;
        if f.category == Some(Category::Regression)
            && self.src.base.is_some()
            && let Some((path, (start, end))) = &span
            && let Some(note) = self.pre_existing(index, path, *start, *end, &mut pre_existing)?
        {
            notes.push(note);
        }
        let outside_change = self.outside_change(f);

        // Step 5: a comment there that marks the issue as known.
        let known_issue_comment = match &span {
            Some((path, (start, end))) => self.known_issue_comment(path, *start, *end)?,
            None => None,
        };

        Ok(Verification {
            status,
            path_ok,
            lines_ok: lines.ok,
            quote_ok: qc.ok,
            symbols_missing: Vec::new(),
            pre_existing,
            outside_change,
            known_issue_comment,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        })
    }

    /// Step 3 when there is a quote and something to check it in (a bare name several files
    /// fit, each holding the quote, is not); without it, the note of a cited binary file or
    /// submodule when lines were cited in it.
    fn quote_if_checkable(
        &mut self,
        index: usize,
        f: &mut Finding,
        quote: Option<&Quote>,
        cited: &Cited,
        lines: &Lines,
        notes: &mut Vec<String>,
    ) -> Result<QuoteCheck> {
        if let Some(q) = quote.filter(|_| !cited.ambiguous_quote || !cited.targets.is_empty()) {
            return self.check_quote(index, f, q, cited, lines.opaque_note.clone(), notes);
        }
        if cited
            .targets
            .iter()
            .any(|t| f.locations[t.index].start.is_some())
        {
            notes.extend(lines.opaque_note.clone());
        }
        Ok(QuoteCheck::default())
    }

    /// Whether the finding cites only files that exist at head and that the change left alone
    /// (known only when there is a base to compare with).
    fn outside_change(&self, f: &Finding) -> bool {
        self.src.base.is_some()
            && f.locations.iter().any(|l| self.src.exists_at_head(&l.path))
            && !f
                .locations
                .iter()
                .any(|l| self.src.is_changed_path(&l.path))
    }

    /// A comment at or near `start..=end` of `path` at head that marks the issue as known.
    /// A comment the change itself added is the change's author speaking: it does not count.
    fn known_issue_comment(&mut self, path: &str, start: u32, end: u32) -> Result<Option<String>> {
        let added: Vec<(u32, u32)> = self
            .src
            .changed_file(path)
            .map(|c| {
                c.hunks
                    .iter()
                    .filter(|h| h.new_lines > 0)
                    .map(|h| (h.new_start, h.new_start + h.new_lines - 1))
                    .collect()
            })
            .unwrap_or_default();
        let by_change = |line: u32| added.iter().any(|&(a, b)| (a..=b).contains(&line));
        Ok(match &*self.src.content(Side::Head, path)? {
            Content::Text(ft) => known_issue::comment_near(ft, start, end, by_change),
            _ => None,
        })
    }

    /// Step 1: every cited path resolved to a file (at head, or at the base when deleted),
    /// the locations rewritten to full paths.
    fn resolve_paths(
        &mut self,
        f: &mut Finding,
        quote: Option<&Quote>,
        notes: &mut Vec<String>,
    ) -> Result<Cited> {
        let mut cited = Cited::default();
        for index in 0..f.locations.len() {
            let Resolution { resolved, note } = self.src.resolve(&f.locations[index].path);
            let (side, path) = match resolved {
                Resolved::Head(path) => (Side::Head, path),
                Resolved::Deleted(path) => (Side::Base, path),
                Resolved::Ambiguous(paths) => {
                    // A quote can tell which of the files is meant.
                    let holding = self.files_holding_quote(quote, &paths)?;
                    match holding.as_slice() {
                        [path] => {
                            notes.push(format!(
                                "{} resolved to {path} by the quoted code",
                                f.locations[index].path
                            ));
                            let content = self.src.content(Side::Head, path)?;
                            f.locations[index].path = path.clone();
                            cited.targets.push(CitedFile {
                                index,
                                side: Side::Head,
                                path: path.clone(),
                                content,
                            });
                            continue;
                        }
                        [] => {
                            notes.extend(note);
                            cited.unresolved.push(index);
                            continue;
                        }
                        several => {
                            // The quote is real but cannot tell the files apart.
                            notes.push(format!(
                                "{} is ambiguous: {} files of that name hold the quoted code ({})",
                                f.locations[index].path,
                                several.len(),
                                short_list(several)
                            ));
                            cited.ambiguous_quote = true;
                            cited.unresolved.push(index);
                            continue;
                        }
                    }
                }
                Resolved::Missing => {
                    notes.extend(note);
                    cited.unresolved.push(index);
                    continue;
                }
            };
            notes.extend(note);
            let content = self.src.content(side, &path)?;
            f.locations[index].path = path.clone();
            cited.targets.push(CitedFile {
                index,
                side,
                path,
                content,
            });
        }
        Ok(cited)
    }

    /// Step 3: the quote at the cited lines, elsewhere in the cited files, at the merge-base,
    /// in another changed file, or (no cited file) anywhere; else not code, or not found.
    fn check_quote(
        &mut self,
        index: usize,
        f: &mut Finding,
        q: &Quote,
        cited: &Cited,
        opaque_note: Option<String>,
        notes: &mut Vec<String>,
    ) -> Result<QuoteCheck> {
        let text_targets: Vec<&CitedFile> = cited
            .targets
            .iter()
            .filter(|t| matches!(&*t.content, Content::Text(_)))
            .collect();
        let mut qc = quote_in_cited_files(f, q, &text_targets);
        if qc.found.is_some() {
            qc.ok = Some(true);
            return Ok(qc);
        }
        if text_targets.is_empty() && !cited.targets.is_empty() {
            // Only binary files or submodules were cited: nothing to match in.
            notes.extend(opaque_note);
            return Ok(qc);
        }
        // Not in the cited files. When no cited file could be read, look for it in the change
        // (and then the whole tree) to find where the finding belongs.
        if cited.targets.is_empty() {
            self.quote_anywhere(index, f, q, cited, &mut qc, notes);
        }
        // Reviewers also quote the code a change removed or rewrote: the merge-base version of
        // a changed file.
        if qc.found.is_none()
            && let Some((base_path, (s, e))) = self.quote_at_base(q, &text_targets)?
        {
            notes.push(format!(
                "quoted code is the merge-base version ({base_path}:{}), changed by the change",
                line_range(s, e)
            ));
            qc.from_base = true;
        }
        if qc.found.is_none() && !qc.from_base && !text_targets.is_empty() {
            self.quote_in_other_changed_file(index, f, q, &text_targets, &mut qc, notes);
        }
        qc.ok = Some(qc.found.is_some() || qc.from_base);
        if qc.found.is_none() && !qc.from_base {
            self.quote_not_found(f, &text_targets, &mut qc, notes)?;
        }
        Ok(qc)
    }

    /// No cited file could be read: the first place in the change (then the whole tree) that
    /// holds the quote becomes the finding's location, replacing the first unresolved one.
    fn quote_anywhere(
        &mut self,
        index: usize,
        f: &mut Finding,
        q: &Quote,
        cited: &Cited,
        qc: &mut QuoteCheck,
        notes: &mut Vec<String>,
    ) {
        let Some((path, span)) = self
            .lookups
            .quote_places(index, Search::Anywhere, q, &[])
            .into_iter()
            .next()
        else {
            return;
        };
        let loc = Location::new(path.clone(), Some(span.0), Some(span.1));
        let at = match cited.unresolved.first() {
            Some(&i) => {
                notes.push(format!("location corrected {} → {loc}", f.locations[i]));
                f.locations[i] = loc;
                qc.relocated = true;
                i
            }
            None => {
                notes.push(format!("location from the quoted code: {loc}"));
                f.locations.push(loc);
                f.locations.len() - 1
            }
        };
        qc.found = Some(Found {
            index: at,
            path,
            span,
        });
        qc.in_place = true;
    }

    /// A reviewer may cite the wrong file of the change: a distinctive quote that exactly
    /// one other changed file holds moves the first cited text file's location there.
    fn quote_in_other_changed_file(
        &mut self,
        index: usize,
        f: &mut Finding,
        q: &Quote,
        text_targets: &[&CitedFile],
        qc: &mut QuoteCheck,
        notes: &mut Vec<String>,
    ) {
        if q.weight() < MIN_QUOTE_WEIGHT || self.src.base.is_none() {
            return;
        }
        let paths: Vec<String> = text_targets.iter().map(|t| t.path.clone()).collect();
        let mut holding = self
            .lookups
            .quote_places(index, Search::OtherChangedFiles, q, &paths);
        if holding.len() == 1
            && let Some((path, span)) = holding.pop()
        {
            let index = text_targets[0].index;
            let moved = Location::new(path.clone(), Some(span.0), Some(span.1));
            notes.push(format!(
                "quoted code is in {moved}, not in {}",
                f.locations[index].path
            ));
            f.locations[index] = moved;
            qc.found = Some(Found { index, path, span });
            qc.relocated = true;
            qc.in_place = true;
        }
    }

    /// The quote is nowhere: said as not code (unchecked) when it reads as a commit message or
    /// prose, else as not found in the first cited text file or the change.
    fn quote_not_found(
        &mut self,
        f: &Finding,
        text_targets: &[&CitedFile],
        qc: &mut QuoteCheck,
        notes: &mut Vec<String>,
    ) -> Result<()> {
        let code = f.code.as_ref().map_or("", |c| c.code.as_str());
        if let Some(what) = self.not_code(code)? {
            notes.push(format!("quoted text is {what}, not code: not checked"));
            qc.ok = None;
            qc.not_code = true;
            return Ok(());
        }
        let place = match text_targets.first() {
            Some(t) if t.side == Side::Base => format!("in {} at the merge-base", t.path),
            Some(t) => format!("in {} at head", t.path),
            None if self.src.changed.is_empty() => "in the repository at head".to_string(),
            None => "in the changed files at head".to_string(),
        };
        notes.push(format!("quoted code not found {place}"));
        Ok(())
    }

    /// What a quote found nowhere is when it is not code: "a commit message" (most of its
    /// lines are in the change's commit messages) or "prose"; `None` when it reads as code.
    fn not_code(&mut self, code: &str) -> Result<Option<&'static str>> {
        if self.messages.is_none() {
            let range = match &self.src.base {
                Some(base) => format!("{base}..{}", self.src.head),
                None => self.src.head.clone(),
            };
            let mut args = vec!["log", "--format=%B", "--max-count", MAX_COMMITS_READ];
            if self.src.base.is_none() {
                args[3] = "1";
            }
            args.extend([range.as_str(), "--"]);
            let raw = crate::git::git_text(&self.src.repo, &args).unwrap_or_default();
            self.messages = Some(Messages::new(&raw));
        }
        if self.messages.as_ref().is_some_and(|m| m.hold(code)) {
            return Ok(Some("a commit message"));
        }
        Ok(reads_as_prose(code).then_some("prose"))
    }

    /// The head lines a grounded finding stands on: where its quote was found, else the first
    /// cited text file at head with lines.
    fn head_span(
        &self,
        f: &Finding,
        cited: &Cited,
        found: Option<&Found>,
    ) -> Option<(String, (u32, u32))> {
        match found {
            // Code of a deleted file is not at head: the change removed it.
            Some(fd) => {
                let on_base = cited
                    .targets
                    .iter()
                    .any(|t| t.index == fd.index && t.side == Side::Base);
                (!on_base).then(|| (fd.path.clone(), fd.span))
            }
            None => cited
                .targets
                .iter()
                .filter(|t| t.side == Side::Head && matches!(&*t.content, Content::Text(_)))
                .find_map(|t| {
                    let loc = &f.locations[t.index];
                    loc.start
                        .map(|s| (t.path.clone(), (s, loc.end_line().unwrap_or(s))))
                }),
        }
    }

    /// Where the quote is in the merge-base version of a cited file the change modified or
    /// renamed: its base path and lines.
    fn quote_at_base(
        &mut self,
        q: &Quote,
        targets: &[&CitedFile],
    ) -> Result<Option<(String, (u32, u32))>> {
        if self.src.base.is_none() {
            return Ok(None);
        }
        for t in targets.iter().filter(|t| t.side == Side::Head) {
            let Some(c) = self.src.changed_file(&t.path) else {
                continue;
            };
            if !matches!(
                c.kind,
                ChangeKind::Modified | ChangeKind::Renamed | ChangeKind::TypeChanged
            ) {
                continue;
            }
            let base_path = c.old_path.clone().unwrap_or_else(|| c.path.clone());
            if let Content::Text(ft) = &*self.src.content(Side::Base, &base_path)?
                && let Some(span) = q.find_in(ft).first()
            {
                return Ok(Some((base_path, *span)));
            }
        }
        Ok(None)
    }

    /// The files of `paths` that hold the quote (none without a quote).
    fn files_holding_quote(
        &mut self,
        quote: Option<&Quote>,
        paths: &[String],
    ) -> Result<Vec<String>> {
        let Some(q) = quote else {
            return Ok(Vec::new());
        };
        let mut holding = Vec::new();
        for p in paths {
            if let Content::Text(ft) = &*self.src.content(Side::Head, p)?
                && !q.find_in(ft).is_empty()
            {
                holding.push(p.clone());
            }
        }
        Ok(holding)
    }

    /// Decides whether head lines `start..=end` of `path` predate the change. Sets `*pre` and
    /// returns the note to show, or `None` when there is nothing to say (the lines are new).
    fn pre_existing(
        &mut self,
        index: usize,
        path: &str,
        start: u32,
        end: u32,
        pre: &mut bool,
    ) -> Result<Option<String>> {
        let Content::Text(head) = &*self.src.content(Side::Head, path)? else {
            return Ok(None);
        };
        if start == 0 || end < start || end > head.line_count() {
            return Ok(None);
        }
        let changed = self.src.changed_file(path).cloned();
        let untouched = match &changed {
            None => true,
            Some(c) if c.binary || c.submodule => return Ok(None),
            Some(c) if matches!(c.kind, ChangeKind::Added | ChangeKind::Copied) => false,
            Some(c) => {
                if history::touched(&c.hunks, start, end) {
                    false
                } else {
                    let base_path = c.old_path.clone().unwrap_or_else(|| c.path.clone());
                    match &*self.src.content(Side::Base, &base_path)? {
                        Content::Text(base) => same_at_base(head, base, &c.hunks, start, end),
                        _ => false,
                    }
                }
            }
        };
        if !untouched {
            return Ok(None);
        }
        let lines = line_range(start, end);
        let from = (start as usize).saturating_sub(1);
        let to = (end as usize).min(head.lines.len());
        let span: Vec<String> = head.lines.get(from..to).unwrap_or_default().to_vec();
        if let Some(reason) = self.change_uses(index, &span) {
            return Ok(Some(format!(
                "kept as a regression: lines {lines} predate the change, but {reason}"
            )));
        }
        *pre = true;
        Ok(Some(format!(
            "pre-existing: lines {lines} are unchanged since the merge-base"
        )))
    }

    /// Whether the change's added lines call a name the span defines, or copy the span. Asked
    /// of [`Lookups`]: not known until the changed files were searched (then "no").
    fn change_uses(&mut self, index: usize, span: &[String]) -> Option<String> {
        let names = history::defined_names(span);
        let folded: Vec<String> = span
            .iter()
            .map(|l| super::quote::fold(l))
            .filter(|l| l.len() >= 12)
            .collect();
        let keys: Vec<String> = names.iter().chain(&folded).cloned().collect();
        if keys.is_empty() {
            return None;
        }
        let added = self.lookups.added(index, &keys)?;
        for name in &names {
            if let Some((path, line)) = added.get(name) {
                return Some(format!("the change calls `{name}` at {path}:{line}"));
            }
        }
        if let Some((path, line)) = folded.first().and_then(|l| added.get(l))
            && folded.iter().all(|l| added.contains_key(l))
        {
            return Some(format!("the change copies this code at {path}:{line}"));
        }
        None
    }
}

/// Step 2: the cited lines exist in the cited text files.
fn check_lines(f: &Finding, cited: &Cited, notes: &mut Vec<String>) -> Lines {
    let mut lines = Lines {
        ok: cited.unresolved.is_empty(),
        opaque_file: false,
        opaque_note: None,
    };
    for t in &cited.targets {
        let loc = &f.locations[t.index];
        match &*t.content {
            Content::Text(ft) => {
                if let Some(start) = loc.start {
                    let end = loc.end_line().unwrap_or(start);
                    if start == 0 || end < start || end > ft.line_count() {
                        lines.ok = false;
                        notes.push(format!(
                            "lines {} do not exist in {} ({} lines)",
                            line_range(start, end),
                            t.path,
                            ft.line_count()
                        ));
                    }
                }
            }
            Content::Binary | Content::Missing => {
                lines.opaque_file = true;
                if lines.opaque_note.is_none() {
                    let what = if matches!(&*t.content, Content::Binary) {
                        "binary file"
                    } else {
                        "submodule"
                    };
                    lines.opaque_note = Some(format!("{what}: contents not checked ({})", t.path));
                }
                if loc.start.is_some() {
                    lines.ok = false;
                }
            }
        }
    }
    lines
}

/// Corrects the location the quote was found for to where it is: its path, and its lines
/// unless the quote is at the cited ones (a move of cited lines is noted as a relocation).
fn move_to_quote(f: &mut Finding, qc: &mut QuoteCheck, notes: &mut Vec<String>) {
    let Some(fd) = &qc.found else {
        return;
    };
    let loc = &mut f.locations[fd.index];
    if loc.path != fd.path {
        loc.path = fd.path.clone();
    }
    match loc.start {
        Some(start) if !qc.in_place => {
            let old = line_range(start, loc.end_line().unwrap_or(start));
            notes.push(format!(
                "lines corrected {old} → {}",
                line_range(fd.span.0, fd.span.1)
            ));
            qc.relocated = true;
            loc.start = Some(fd.span.0);
            loc.end = Some(fd.span.1);
        }
        None => {
            loc.start = Some(fd.span.0);
            loc.end = Some(fd.span.1);
        }
        Some(_) => {}
    }
}

/// The finding's status from what the quote, the paths and the lines gave: the quote decides
/// when it was checked; else an unreadable or ambiguous quote leaves it unchecked, and the
/// paths, then the lines (unchecked when they are in a binary file or submodule), decide.
fn status_of(
    qc: &QuoteCheck,
    cited: &Cited,
    lines: &Lines,
    path_ok: bool,
    quoted: bool,
) -> VerificationStatus {
    match qc.ok {
        Some(true) if qc.relocated => VerificationStatus::Relocated,
        Some(true) => VerificationStatus::Grounded,
        Some(false) => VerificationStatus::Ungrounded,
        None if qc.not_code || cited.ambiguous_quote => VerificationStatus::Unchecked,
        None if !path_ok => VerificationStatus::Ungrounded,
        None if lines.opaque_file && (quoted || !lines.ok) => VerificationStatus::Unchecked,
        None if !lines.ok => VerificationStatus::Ungrounded,
        None => VerificationStatus::Grounded,
    }
}

/// The quote in the cited text files: at the cited lines (or anywhere in a file cited without
/// lines), which keeps the lines; else the occurrence nearest the cited lines of the first
/// file that holds it, a relocation. Stops at the first file where it is at the cited lines.
fn quote_in_cited_files(f: &Finding, q: &Quote, text_targets: &[&CitedFile]) -> QuoteCheck {
    let mut qc = QuoteCheck::default();
    let mut relocation: Option<Found> = None;
    for t in text_targets {
        let Content::Text(ft) = &*t.content else {
            continue;
        };
        let spans = q.find_in(ft);
        if spans.is_empty() {
            continue;
        }
        let loc = &f.locations[t.index];
        match loc.start {
            None => {
                qc.found.get_or_insert(Found {
                    index: t.index,
                    path: t.path.clone(),
                    span: spans[0],
                });
                qc.in_place = true;
            }
            Some(start) => {
                let end = loc.end_line().unwrap_or(start);
                if let Some(span) = spans.iter().find(|(s, e)| *s <= end && *e >= start) {
                    qc.found = Some(Found {
                        index: t.index,
                        path: t.path.clone(),
                        span: *span,
                    });
                    qc.in_place = true;
                } else if relocation.is_none() {
                    let nearest = spans
                        .iter()
                        .min_by_key(|(s, _)| s.abs_diff(start))
                        .copied()
                        .unwrap_or(spans[0]);
                    relocation = Some(Found {
                        index: t.index,
                        path: t.path.clone(),
                        span: nearest,
                    });
                }
            }
        }
        if qc.in_place && loc.start.is_some() {
            break;
        }
    }
    if qc.found.is_none() {
        qc.found = relocation;
    }
    qc
}

/// Whether head lines `start..=end` read the same at their merge-base lines.
fn same_at_base(
    head: &FileText,
    base: &FileText,
    hunks: &[crate::types::Hunk],
    start: u32,
    end: u32,
) -> bool {
    (start..=end).all(|h| {
        let b = history::base_line(hunks, h);
        match (
            head.folded.get(h as usize - 1),
            (b >= 1).then(|| base.folded.get(b as usize - 1)).flatten(),
        ) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        }
    })
}

/// Turns a location written as a forge link into a repository path with lines:
/// `https://github.com/o/r/blob/<ref>/src/a.rs#L10-L20` → `src/a.rs:10-20`, and
/// `src/a.rs#L10` → `src/a.rs:10`.
fn normalize_location(loc: &mut Location) {
    let mut path = loc.path.trim().to_string();
    if path.starts_with("http://") || path.starts_with("https://") {
        for marker in ["/blob/", "/tree/", "/-/blob/"] {
            if let Some(at) = path.find(marker) {
                let rest = &path[at + marker.len()..];
                // Drop the ref (a branch or commit id) that follows the marker.
                if let Some((_, p)) = rest.split_once('/') {
                    path = p.to_string();
                }
                break;
            }
        }
    }
    // `a.rs:12`, `a.rs:12-14`, `a.rs:12:5` left in the path by a lenient parser.
    if loc.start.is_none()
        && let Some((p, rest)) = path.clone().split_once(':')
        && !p.is_empty()
        && !rest.is_empty()
        && rest
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '–' | ':'))
    {
        let mut parts = rest.split(':').next().unwrap_or("").splitn(2, ['-', '–']);
        let start = parts.next().and_then(|s| s.parse().ok());
        let end = parts.next().and_then(|s| s.parse().ok());
        if start.is_some() {
            loc.start = start;
            loc.end = end.or(start);
            path = p.to_string();
        }
    }
    if let Some((p, anchor)) = path.clone().split_once("#L") {
        if loc.start.is_none() {
            let mut parts = anchor.splitn(2, '-');
            let start = parts
                .next()
                .and_then(|s| s.trim_start_matches('L').parse().ok());
            let end = parts
                .next()
                .and_then(|s| s.trim_start_matches('L').parse().ok());
            loc.start = start;
            loc.end = end.or(start);
        }
        path = p.to_string();
    }
    loc.path = path;
}

/// At most three paths, then how many more.
pub(crate) fn short_list(paths: &[String]) -> String {
    if paths.len() <= 3 {
        paths.join(", ")
    } else {
        format!("{}, and {} more", paths[..3].join(", "), paths.len() - 3)
    }
}

/// `193` or `193-196`.
fn line_range(start: u32, end: u32) -> String {
    if end == start {
        start.to_string()
    } else {
        format!("{start}-{end}")
    }
}
