#!/usr/bin/env python3
"""The structure of src/ that issue 33 asks for, checked so that it stays.

Two rules, both over the library's own code (test code excluded: `#[cfg(test)]` items and the
files they load, and `*_tests.rs` / `tests.rs` files):

1. No function over MAX_FN_LINES lines, counted from the line of its `fn` to the line of its
   closing brace. A longer function is a list of decisions that wants names (ARCHITECTURE.md,
   STYLE.md section 3).
2. No cycle among the top-level modules of src/ (`src/X.rs` or `src/X/`): a `crate::X` path
   (or a `super::` path that climbs to the crate root) written in module Y is an edge Y -> X.
   Stages import only downward, so a cycle means a layer reaches back up.

Comments, string literals and char literals are blanked before anything is read, so a path
named in a doc comment or an error message is no edge. Standard library only: CI runs this
before anything is installed.

Usage: scripts/check-structure.py [SRC_DIR]   (default: src/ beside this script's folder)
       scripts/check-structure.py --self-test  (the rules on small crates written in a temp dir)
Exit status 0 when both rules hold, 1 with the offenders printed otherwise.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

MAX_FN_LINES = 100

# The crate roots: their `crate::X` paths declare and re-export, they are no stage.
ROOTS = {"lib", "main"}


def blank_non_code(text: str) -> str:
    """The text with comments, strings and char literals replaced by spaces (newlines kept).

    One pass, linear in the text: each character is looked at a bounded number of times.
    Lifetimes (`'a`) are told from char literals (`'a'`, `'\\n'`) by the closing quote.
    """
    out = list(text)
    i, n = 0, len(text)

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif (m := re.compile(r'b?r(#*)"').match(text, i)) and (i == 0 or not _ident(text[i - 1])):
            close = '"' + m.group(1)
            end = text.find(close, m.end())
            end = n if end < 0 else end + len(close)
            blank(i, end)
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        elif c == "'":
            m = re.compile(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|.)|[^\\'\n])'").match(text, i)
            if m:
                blank(i, m.end())
                i = m.end()
            else:
                i += 1  # a lifetime or a label
        else:
            i += 1
    return "".join(out)


def _ident(c: str) -> bool:
    return c.isalnum() or c == "_"


def matching_brace(code: str, open_at: int) -> int:
    """The index of the `}` closing the `{` at open_at (len(code) when unclosed)."""
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code)


def item_end(code: str, start: int) -> int:
    """The end of the item starting at `start`: its `;`, or the brace closing its body."""
    nest = 0
    for k in range(start, len(code)):
        ch = code[k]
        if ch in "([":
            nest += 1
        elif ch in ")]":
            nest -= 1
        elif ch == ";" and nest == 0:
            return k + 1
        elif ch == "{" and nest == 0:
            return matching_brace(code, k) + 1
    return len(code)


CFG_TEST = re.compile(r"#\[cfg\((?:test|all\(test\b[^\]]*|any\(test\b[^\]]*)\)\]")
MOD_DECL = re.compile(r"\bmod\s+(\w+)\s*;")


def strip_test_items(code: str) -> tuple[str, list[str]]:
    """The code with every `#[cfg(test)]` item blanked, and the names of `mod x;` it declared."""
    out = list(code)
    test_mods: list[str] = []
    for m in CFG_TEST.finditer(code):
        end = item_end(code, m.end())
        decl = MOD_DECL.search(code, m.end(), end)
        if decl and decl.end() == end:
            test_mods.append(decl.group(1))
        for k in range(m.start(), end):
            if out[k] != "\n":
                out[k] = " "
    return "".join(out), test_mods


def module_path(src: Path, file: Path) -> list[str]:
    """`src/a/b.rs` -> ["a", "b"]; `src/a/mod.rs` -> ["a"]; `src/lib.rs` -> ["lib"]."""
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod" and len(parts) > 1:
        parts.pop()
    return parts


FN = re.compile(r"\bfn\s+(\w+)")


def long_functions(code: str, rel: str) -> list[tuple[int, str, str]]:
    """(lines, "file:line", name) for each function body over MAX_FN_LINES lines."""
    found = []
    for m in FN.finditer(code):
        end = item_end(code, m.end())
        if code[end - 1] != "}":
            continue  # a declaration without a body (trait method, extern)
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, end - 1) + 1
        lines = last - first + 1
        if lines > MAX_FN_LINES:
            found.append((lines, f"{rel}:{first}", m.group(1)))
    return found


CRATE_PATH = re.compile(r"\bcrate\s*::\s*(\{|\w+)")
SUPER_PATH = re.compile(r"\b((?:super\s*::\s*)+)(\{|\w+)")


def group_heads(code: str, open_at: int) -> list[str]:
    """The first segment of each path in the `{...}` group opening at open_at."""
    body = code[open_at + 1 : matching_brace(code, open_at)]
    heads, depth, start = [], 0, 0
    for k, ch in enumerate(body + ","):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            word = re.match(r"\s*(\w+)", body[start:k])
            if word:
                heads.append(word.group(1))
            start = k + 1
    return heads


def top_level_targets(code: str, mod_path: list[str]) -> set[str]:
    """The top-level modules this file's `crate::X` and root-reaching `super::` paths name."""
    targets: set[str] = set()

    def add(head_match: re.Match, group: int) -> None:
        head = head_match.group(group)
        if head == "{":
            targets.update(group_heads(code, head_match.start(group)))
        else:
            targets.add(head)

    for m in CRATE_PATH.finditer(code):
        add(m, 1)
    # `super` climbs one module: from `crate::a::b` (src/a/b.rs or src/a/b/mod.rs) two reach
    # the root. (Inline `mod x { }` blocks outside tests are not followed.)
    depth_to_root = len(mod_path)
    for m in SUPER_PATH.finditer(code):
        if m.group(1).count("super") == depth_to_root and depth_to_root > 0:
            add(m, 2)
    return targets


def rust_files(src: Path) -> list[Path]:
    return sorted(p for p in src.rglob("*.rs") if p.is_file())


def is_test_file(path: Path, test_mod_files: set[Path]) -> bool:
    return path.name.endswith("_tests.rs") or path.name == "tests.rs" or path in test_mod_files


def test_mod_files_of(path: Path, names: list[str]) -> set[Path]:
    """The files a `#[cfg(test)] mod name;` in `path` loads."""
    base = path.parent if path.name in ("mod.rs", "lib.rs", "main.rs") else path.with_suffix("")
    return {f for n in names for f in (base / f"{n}.rs", base / n / "mod.rs")}


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    sccs: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))
    return sccs


def self_test() -> int:
    """The rules on small crates written here: each case fails if the reading it checks breaks."""
    import tempfile

    def run_on(files: dict[str, str]) -> tuple[list, list]:
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "src"
            for name, text in files.items():
                (src / name).parent.mkdir(parents=True, exist_ok=True)
                (src / name).write_text(text)
            return check(src)

    long_body = "fn long() {\n" + "    let x = 1;\n" * 99 + "}\n"  # 101 lines
    short_body = "fn short() {\n" + "    let x = 1;\n" * 98 + "}\n"  # 100 lines
    cases = [
        ("101 lines is long", {"lib.rs": long_body}, 1, 0),
        ("100 lines is not", {"lib.rs": short_body}, 0, 0),
        ("cfg(test) mod is skipped", {"lib.rs": "#[cfg(test)]\nmod tests {\n" + long_body + "}\n"}, 0, 0),
        ("a _tests.rs file is skipped", {"a_tests.rs": long_body}, 0, 0),
        ("a brace in a string is no brace", {"lib.rs": 'fn f() { let s = "}"; }\n' + long_body}, 1, 0),
        ("a brace in a char is no brace", {"lib.rs": "fn f<'a>(x: &'a str) { let c = '}'; }\n" + long_body}, 1, 0),
        ("a cycle through a use group", {"a/mod.rs": "use crate::{b::X, c};", "b.rs": "use crate::a::Y;"}, 0, 1),
        ("a cycle through super::super", {"a/x.rs": "use super::super::b::X;", "b.rs": "fn f() { crate::a::g() }"}, 0, 1),
        ("paths in comments are no edge", {"a.rs": "// crate::b\n/// [`crate::b`]", "b.rs": "use crate::a;"}, 0, 0),
        ("paths in tests are no edge", {"a.rs": "#[cfg(test)]\nmod t { use crate::b; }", "b.rs": "use crate::a;"}, 0, 0),
        ("a downward chain is no cycle", {"a.rs": "use crate::b;", "b.rs": "use crate::c;", "c.rs": ""}, 0, 0),
    ]
    failed = 0
    for name, files, want_long, want_cycles in cases:
        long_fns, cycles = run_on(files)
        if (len(long_fns), len(cycles)) != (want_long, want_cycles):
            print(f"self-test FAILED: {name}: {len(long_fns)} long, {len(cycles)} cycles")
            failed += 1
    print(f"check-structure self-test: {len(cases) - failed} of {len(cases)} passed")
    return 1 if failed else 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "src"
    if not src.is_dir():
        print(f"check-structure: {src} is not a folder; pass the crate's src/ folder", file=sys.stderr)
        return 2
    long_fns, cycles = check(src)
    for lines, where, name in sorted(long_fns, reverse=True):
        print(f"{where}: fn {name} is {lines} lines (at most {MAX_FN_LINES}): split it into named steps")
    for comp, comp_edges in cycles:
        print(f"module cycle among {', '.join(comp)}:")
        for a, b, witness in comp_edges:
            print(f"  {a} -> {b}   (e.g. {witness})")
    if long_fns or cycles:
        print(f"check-structure: {len(long_fns)} long function(s), {len(cycles)} module cycle(s)")
        return 1
    count = len(rust_files(src))
    print(f"check-structure: {count} files, no function over {MAX_FN_LINES} lines, no module cycle")
    return 0


def check(src: Path) -> tuple[list[tuple[int, str, str]], list[tuple[list[str], list[tuple[str, str, str]]]]]:
    """The long functions, and each cycle with its edges (from, to, a file that makes it)."""
    top_level = {module_path(src, p)[0] for p in rust_files(src)} - ROOTS
    long_fns: list[tuple[int, str, str]] = []
    edges: dict[str, set[str]] = {m: set() for m in top_level}
    witnesses: dict[tuple[str, str], str] = {}
    test_files: set[Path] = set()
    files = rust_files(src)
    parsed = {}
    for path in files:
        code, test_mods = strip_test_items(blank_non_code(path.read_text(encoding="utf-8")))
        test_files |= test_mod_files_of(path, test_mods)
        parsed[path] = code
    for path in files:
        if is_test_file(path, test_files):
            continue
        code = parsed[path]
        rel = os.path.relpath(path, src.parent)
        long_fns += long_functions(code, rel)
        mod_path = module_path(src, path)
        owner = mod_path[0]
        if owner in ROOTS:
            continue
        for target in top_level_targets(code, mod_path):
            if target in top_level and target != owner:
                edges[owner].add(target)
                witnesses.setdefault((owner, target), rel)
    cycles = []
    for comp in find_cycles(edges):
        members = set(comp)
        comp_edges = [(a, b, witnesses[(a, b)]) for a in comp for b in sorted(edges[a] & members)]
        cycles.append((comp, comp_edges))
    return long_fns, cycles


if __name__ == "__main__":
    sys.exit(main())
