//! One finding checked against the code: path, lines, quote, symbols, pre-existing.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use anyhow::Result;

use super::git;
use super::history;
use super::quote::{FileText, Quote};
use super::source::{Content, RepoSnapshot, Resolution, Resolved, Side};
use super::symbols::{self, Symbol, contains_word};
use crate::types::ChangeKind;
use crate::types::{Category, Finding, Location, Verification, VerificationStatus};

/// How much text (see [`Quote::weight`]) a quote needs before it may move a finding to
/// another file.
const MIN_QUOTE_WEIGHT: usize = 24;

/// How many files a quote-only finding's fallback search may look at.
const GREP_LIMIT: usize = 20;

/// A running lookup of the findings' identifiers.
pub struct SymbolSearch {
    /// Per finding, in order: the identifiers worth looking up.
    candidates: Vec<Vec<Symbol>>,
    search: std::thread::JoinHandle<Result<HashSet<String>>>,
}

impl SymbolSearch {
    /// Waits for the lookup and records, on each verification (same order as the findings
    /// given to [`Checker::start_symbol_search`]), the identifiers that exist nowhere at head.
    /// When the lookup failed, nothing is reported missing and the returned note says why.
    pub fn finish<'a>(
        self,
        verifications: impl Iterator<Item = &'a mut Verification>,
    ) -> Option<String> {
        let present = match self.search.join() {
            Ok(Ok(present)) => present,
            Ok(Err(e)) => return Some(format!("symbols not checked: {e:#}")),
            Err(_) => return Some("symbols not checked: the lookup thread panicked".to_string()),
        };
        for (v, symbols) in verifications.zip(self.candidates) {
            let missing: Vec<String> = symbols
                .into_iter()
                .filter(|s| s.parts.iter().any(|p| !present.contains(p)))
                .map(|s| s.written)
                .collect();
            if missing.is_empty() {
                continue;
            }
            let names: Vec<String> = missing.iter().map(|s| format!("`{s}`")).collect();
            let said = format!("not found in the repository at head: {}", names.join(", "));
            v.note = Some(match v.note.take() {
                Some(note) => format!("{note}; {said}"),
                None => said,
            });
            v.symbols_missing = missing;
        }
        None
    }
}

/// Checks findings one by one against a [`RepoSnapshot`], sharing what it learns across findings:
/// file contents, the words present in the repository, the change's added lines.
pub struct Checker {
    pub src: RepoSnapshot,
    added: Option<AddedIndex>,
    /// Folded line → the changed files (at head) that have it, for finding a quote's file.
    changed_lines: Option<HashMap<String, Vec<String>>>,
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

impl Checker {
    pub fn new(src: RepoSnapshot) -> Self {
        Checker {
            src,
            added: None,
            changed_lines: None,
        }
    }

    /// Starts looking up, in one `git grep` on a thread of its own, every identifier part the
    /// findings name; the file checks run meanwhile. [`SymbolSearch::finish`] gives the result.
    pub fn start_symbol_search<'a>(
        &self,
        findings: impl Iterator<Item = &'a Finding>,
    ) -> SymbolSearch {
        let candidates: Vec<Vec<Symbol>> = findings.map(|f| self.candidate_symbols(f)).collect();
        let words: HashSet<String> = candidates
            .iter()
            .flatten()
            .flat_map(|s| s.parts.iter().cloned())
            .collect();
        let repo = self.src.repo.clone();
        let head = self.src.head.clone();
        let search = std::thread::spawn(move || git::words_present(&repo, &head, &words));
        SymbolSearch { candidates, search }
    }

    /// Reads, in one pass through `cat-file`, every file the findings will need: the cited
    /// files at head (or at the base when deleted, all candidates of an ambiguous name), the
    /// base versions the pre-existing check compares, and the changed files when a regression
    /// or a quote without a usable location needs them.
    pub fn prefetch<'a>(&mut self, findings: impl Iterator<Item = &'a Finding>) -> Result<()> {
        let mut wanted: Vec<(Side, String)> = Vec::new();
        let mut need_changed = false;
        for f in findings {
            let regression = f.category == Some(Category::Regression);
            let quoted = f.code.is_some();
            need_changed |= regression || (quoted && f.locations.is_empty());
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
                    Resolved::Missing if quoted => need_changed = true,
                    _ => {}
                }
            }
        }
        if need_changed {
            for c in self.src.readable_changed() {
                wanted.push((Side::Head, c.path.clone()));
            }
        }
        self.src.prefetch(wanted)
    }

    /// The backticked identifiers of a finding's title and explanation that are worth looking
    /// up: not file names, and not names its proposed fix introduces.
    fn candidate_symbols(&self, f: &Finding) -> Vec<Symbol> {
        let text = format!("{}\n{}", f.title, f.explanation);
        let fix = format!(
            "{}\n{}",
            f.fix.as_deref().unwrap_or(""),
            f.fix_diff.as_deref().unwrap_or("")
        );
        symbols::extract(&text)
            .into_iter()
            .filter(|s| !self.src.is_file_name(&s.written))
            .filter(|s| !s.parts.iter().all(|p| contains_word(&fix, p)))
            .collect()
    }

    /// Checks one finding's path, lines, quote and history, rewriting its locations where the
    /// check corrected them. Symbols are added afterwards by [`SymbolSearch::finish`].
    pub fn check(&mut self, f: &mut Finding) -> Result<Verification> {
        let mut notes: Vec<String> = Vec::new();
        let quote = f.code.as_ref().and_then(|c| Quote::parse(&c.code));

        if f.locations.is_empty() && quote.is_none() {
            return Ok(Verification::unchecked(
                "no location or quoted code to check",
            ));
        }

        for loc in &mut f.locations {
            normalize_location(loc);
        }

        // 1. Paths.
        let mut targets: Vec<CitedFile> = Vec::new();
        let mut ambiguous_quote = false;
        let mut unresolved: Vec<usize> = Vec::new();
        for index in 0..f.locations.len() {
            let Resolution { resolved, note } = self.src.resolve(&f.locations[index].path);
            let (side, path) = match resolved {
                Resolved::Head(path) => (Side::Head, path),
                Resolved::Deleted(path) => (Side::Base, path),
                Resolved::Ambiguous(paths) => {
                    // A quote can tell which of the files is meant.
                    let holding = self.files_holding_quote(quote.as_ref(), &paths)?;
                    match holding.as_slice() {
                        [path] => {
                            notes.push(format!(
                                "{} resolved to {path} by the quoted code",
                                f.locations[index].path
                            ));
                            let path = path.clone();
                            let content = self.src.content(Side::Head, &path)?;
                            f.locations[index].path = path.clone();
                            targets.push(CitedFile {
                                index,
                                side: Side::Head,
                                path,
                                content,
                            });
                            continue;
                        }
                        [] => {
                            notes.extend(note);
                            unresolved.push(index);
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
                            ambiguous_quote = true;
                            unresolved.push(index);
                            continue;
                        }
                    }
                }
                Resolved::Missing => {
                    notes.extend(note);
                    unresolved.push(index);
                    continue;
                }
            };
            notes.extend(note);
            let content = self.src.content(side, &path)?;
            f.locations[index].path = path.clone();
            targets.push(CitedFile {
                index,
                side,
                path,
                content,
            });
        }

        // 2. Lines.
        let mut lines_ok = true;
        let mut binary = false;
        // "binary file: ..." / "submodule: ...": said when it matters (a quote or lines).
        let mut opaque: Option<String> = None;
        for t in &targets {
            let loc = &f.locations[t.index];
            match &*t.content {
                Content::Text(ft) => {
                    if let Some(start) = loc.start {
                        let end = loc.end_line().unwrap_or(start);
                        if start == 0 || end < start || end > ft.line_count() {
                            lines_ok = false;
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
                    binary = true;
                    if opaque.is_none() {
                        let what = if matches!(&*t.content, Content::Binary) {
                            "binary file"
                        } else {
                            "submodule"
                        };
                        opaque = Some(format!("{what}: contents not checked ({})", t.path));
                    }
                    if loc.start.is_some() {
                        lines_ok = false;
                    }
                }
            }
        }
        if !unresolved.is_empty() {
            lines_ok = false;
        }

        // 3. Quote.
        let mut quote_ok: Option<bool> = None;
        let mut found: Option<Found> = None;
        let mut grounded_in_place = false;
        let mut relocated = false;
        let mut quote_from_base = false;
        if let Some(q) = quote
            .as_ref()
            .filter(|_| !ambiguous_quote || !targets.is_empty())
        {
            let text_targets: Vec<&CitedFile> = targets
                .iter()
                .filter(|t| matches!(&*t.content, Content::Text(_)))
                .collect();
            let mut relocation: Option<Found> = None;
            for t in &text_targets {
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
                        found.get_or_insert(Found {
                            index: t.index,
                            path: t.path.clone(),
                            span: spans[0],
                        });
                        grounded_in_place = true;
                    }
                    Some(start) => {
                        let end = loc.end_line().unwrap_or(start);
                        if let Some(span) = spans.iter().find(|(s, e)| *s <= end && *e >= start) {
                            found = Some(Found {
                                index: t.index,
                                path: t.path.clone(),
                                span: *span,
                            });
                            grounded_in_place = true;
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
                if grounded_in_place && loc.start.is_some() {
                    break;
                }
            }
            if found.is_none() {
                found = relocation;
            }
            if found.is_some() {
                quote_ok = Some(true);
            } else if !text_targets.is_empty() || targets.is_empty() {
                // Not in the cited files. When no cited file could be read, look for it in
                // the change (and then the whole tree) to find where the finding belongs.
                if targets.is_empty() {
                    found = self.search_quote(q)?;
                    if let Some(fd) = &mut found {
                        let loc = Location::new(fd.path.clone(), Some(fd.span.0), Some(fd.span.1));
                        match unresolved.first() {
                            Some(&i) => {
                                notes
                                    .push(format!("location corrected {} → {loc}", f.locations[i]));
                                f.locations[i] = loc;
                                fd.index = i;
                                relocated = true;
                            }
                            None => {
                                notes.push(format!("location from the quoted code: {loc}"));
                                fd.index = f.locations.len();
                                f.locations.push(loc);
                            }
                        }
                        grounded_in_place = true;
                    }
                }
                // Reviewers also quote the code a change removed or rewrote: the merge-base
                // version of a changed file.
                if found.is_none()
                    && let Some((base_path, (s, e))) = self.quote_at_base(q, &text_targets)?
                {
                    notes.push(format!(
                        "quoted code is the merge-base version ({base_path}:{}), changed by the change",
                        line_range(s, e)
                    ));
                    quote_from_base = true;
                }
                // A reviewer may cite the wrong file of the change: a distinctive quote that
                // exactly one other changed file holds moves the location there.
                if found.is_none()
                    && !quote_from_base
                    && !text_targets.is_empty()
                    && q.weight() >= MIN_QUOTE_WEIGHT
                {
                    let cited: Vec<String> = text_targets.iter().map(|t| t.path.clone()).collect();
                    let mut holding = self.changed_files_holding(q, &cited)?;
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
                        found = Some(Found { index, path, span });
                        relocated = true;
                        grounded_in_place = true;
                    }
                }
                quote_ok = Some(found.is_some() || quote_from_base);
                if found.is_none() && !quote_from_base {
                    let place = match text_targets.first() {
                        Some(t) if t.side == Side::Base => {
                            format!("in {} at the merge-base", t.path)
                        }
                        Some(t) => format!("in {} at head", t.path),
                        None if self.src.changed.is_empty() => {
                            "in the repository at head".to_string()
                        }
                        None => "in the changed files at head".to_string(),
                    };
                    notes.push(format!("quoted code not found {place}"));
                }
            } else {
                notes.extend(opaque);
            }
        } else if targets.iter().any(|t| f.locations[t.index].start.is_some()) {
            notes.extend(opaque);
        }

        // Correct the location to where the quote is.
        if let Some(fd) = &found {
            let loc = &mut f.locations[fd.index];
            if loc.path != fd.path {
                loc.path = fd.path.clone();
            }
            match loc.start {
                Some(start) if !grounded_in_place => {
                    let old = line_range(start, loc.end_line().unwrap_or(start));
                    notes.push(format!(
                        "lines corrected {old} → {}",
                        line_range(fd.span.0, fd.span.1)
                    ));
                    relocated = true;
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

        let path_ok = unresolved.is_empty() && (!targets.is_empty() || found.is_some());
        let status = match quote_ok {
            Some(true) if relocated => VerificationStatus::Relocated,
            Some(true) => VerificationStatus::Grounded,
            Some(false) => VerificationStatus::Ungrounded,
            None if ambiguous_quote => VerificationStatus::Unchecked,
            None if !path_ok => VerificationStatus::Ungrounded,
            None if binary && (quote.is_some() || !lines_ok) => VerificationStatus::Unchecked,
            None if !lines_ok => VerificationStatus::Ungrounded,
            None => VerificationStatus::Grounded,
        };

        // 4. Pre-existing, and whether the location is in the change at all.
        let mut pre_existing = false;
        if matches!(
            status,
            VerificationStatus::Grounded | VerificationStatus::Relocated
        ) && !quote_from_base
            && f.category == Some(Category::Regression)
            && self.src.base.is_some()
        {
            let span = match &found {
                Some(fd) => Some((fd.path.clone(), fd.span)),
                None => targets
                    .iter()
                    .filter(|t| t.side == Side::Head && matches!(&*t.content, Content::Text(_)))
                    .find_map(|t| {
                        let loc = &f.locations[t.index];
                        loc.start
                            .map(|s| (t.path.clone(), (s, loc.end_line().unwrap_or(s))))
                    }),
            };
            // Code of a deleted file is not pre-existing: the change removed it.
            let on_head = found.as_ref().is_none_or(|fd| {
                !targets
                    .iter()
                    .any(|t| t.index == fd.index && t.side == Side::Base)
            });
            if let Some((path, (start, end))) = span
                && on_head
                && let Some(note) = self.pre_existing(&path, start, end, &mut pre_existing)?
            {
                notes.push(note);
            }
        }
        let outside_change = self.src.base.is_some()
            && f.locations.iter().any(|l| self.src.exists_at_head(&l.path))
            && !f.locations.iter().any(|l| {
                self.src
                    .changed
                    .iter()
                    .any(|c| c.path == l.path || c.old_path.as_deref() == Some(l.path.as_str()))
            });

        Ok(Verification {
            status,
            path_ok,
            lines_ok,
            quote_ok,
            symbols_missing: Vec::new(),
            pre_existing,
            outside_change,
            known_issue_comment: None,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        })
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

    /// Looks for a quote whose cited file could not be found: in the changed files first, then
    /// in the files of the tree that hold its longest line.
    fn search_quote(&mut self, q: &Quote) -> Result<Option<Found>> {
        if let Some((path, span)) = self.changed_files_holding(q, &[])?.into_iter().next() {
            return Ok(Some(Found {
                index: 0,
                path,
                span,
            }));
        }
        let changed: Vec<String> = self
            .src
            .readable_changed()
            .map(|c| c.path.clone())
            .collect();
        for path in changed {
            if let Content::Text(ft) = &*self.src.content(Side::Head, &path)?
                && let Some(span) = q.find_in(ft).first()
            {
                return Ok(Some(Found {
                    index: 0,
                    path,
                    span: *span,
                }));
            }
        }
        let Some(needle) = q.longest_line() else {
            return Ok(None);
        };
        let head = self.src.head.clone();
        let Ok(paths) = git::files_containing(&self.src.repo, &head, needle, GREP_LIMIT) else {
            return Ok(None);
        };
        for path in paths {
            if let Content::Text(ft) = &*self.src.content(Side::Head, &path)?
                && let Some(span) = q.find_in(ft).first()
            {
                return Ok(Some(Found {
                    index: 0,
                    path,
                    span: *span,
                }));
            }
        }
        Ok(None)
    }

    /// The changed files (but `exclude`) that hold the quote, with where: found through an
    /// index of the changed files' lines by the quote's longest line, so asking costs a lookup.
    fn changed_files_holding(
        &mut self,
        q: &Quote,
        exclude: &[String],
    ) -> Result<Vec<(String, (u32, u32))>> {
        let Some(needle) = q.longest_line() else {
            return Ok(Vec::new());
        };
        if self.changed_lines.is_none() {
            let mut index: HashMap<String, Vec<String>> = HashMap::new();
            let changed: Vec<String> = self
                .src
                .readable_changed()
                .map(|c| c.path.clone())
                .collect();
            for path in changed {
                if let Content::Text(ft) = &*self.src.content(Side::Head, &path)? {
                    for line in ft.folded.iter().filter(|l| !l.is_empty()) {
                        let paths = index.entry(line.clone()).or_default();
                        if paths.last() != Some(&path) {
                            paths.push(path.clone());
                        }
                    }
                }
            }
            self.changed_lines = Some(index);
        }
        let candidates: Vec<String> = self
            .changed_lines
            .as_ref()
            .and_then(|index| index.get(needle))
            .map(|paths| {
                paths
                    .iter()
                    .filter(|p| !exclude.contains(p))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let mut holding = Vec::new();
        for path in candidates {
            if let Content::Text(ft) = &*self.src.content(Side::Head, &path)?
                && let Some(span) = q.find_in(ft).first()
            {
                holding.push((path, *span));
            }
        }
        Ok(holding)
    }

    /// Decides whether head lines `start..=end` of `path` predate the change. Sets `*pre` and
    /// returns the note to show, or `None` when there is nothing to say (the lines are new).
    fn pre_existing(
        &mut self,
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
        if let Some(reason) = self.change_uses(&span)? {
            return Ok(Some(format!(
                "kept as a regression: lines {lines} predate the change, but {reason}"
            )));
        }
        *pre = true;
        Ok(Some(format!(
            "pre-existing: lines {lines} are unchanged since the merge-base"
        )))
    }

    /// Whether the change's added lines call a name the span defines, or copy the span.
    fn change_uses(&mut self, span: &[String]) -> Result<Option<String>> {
        let names = history::defined_names(span);
        let folded: Vec<String> = span
            .iter()
            .map(|l| super::quote::fold(l))
            .filter(|l| l.len() >= 12)
            .collect();
        let added = self.added_index()?;
        for name in &names {
            if let Some((path, line)) = added.words.get(name.as_str()) {
                return Ok(Some(format!("the change calls `{name}` at {path}:{line}")));
            }
        }
        if let Some((path, line)) = folded.first().and_then(|l| added.lines.get(l.as_str()))
            && folded.iter().all(|l| added.lines.contains_key(l.as_str()))
        {
            return Ok(Some(format!(
                "the change copies this code at {path}:{line}"
            )));
        }
        Ok(None)
    }

    /// The change's added lines, indexed once from the changed text files at head.
    fn added_index(&mut self) -> Result<&AddedIndex> {
        if self.added.is_none() {
            let mut index = AddedIndex::default();
            let changed: Vec<_> = self.src.readable_changed().cloned().collect();
            for c in changed {
                let content = self.src.content(Side::Head, &c.path)?;
                let Content::Text(ft) = &*content else {
                    continue;
                };
                for (s, e) in history::added_ranges(&c.hunks) {
                    for line in s.max(1)..=e.min(ft.line_count()) {
                        let i = line as usize - 1;
                        index.add(&c.path, line, &ft.lines[i], &ft.folded[i]);
                    }
                }
            }
            self.added = Some(index);
        }
        Ok(self.added.get_or_insert_with(AddedIndex::default))
    }
}

/// The lines the change added: each identifier and each folded line, with where it first
/// occurs. Built once, so asking about a finding costs a lookup, not a pass over the change.
#[derive(Default)]
struct AddedIndex {
    words: HashMap<String, (String, u32)>,
    lines: HashMap<String, (String, u32)>,
}

impl AddedIndex {
    fn add(&mut self, path: &str, line: u32, text: &str, folded: &str) {
        for word in text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| w.len() > 2)
        {
            if !self.words.contains_key(word) {
                self.words
                    .insert(word.to_string(), (path.to_string(), line));
            }
        }
        if !folded.is_empty() && !self.lines.contains_key(folded) {
            self.lines
                .insert(folded.to_string(), (path.to_string(), line));
        }
    }
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
