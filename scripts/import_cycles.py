#!/usr/bin/env python3
"""Import cycles between sibling modules of a crate (used by scripts/surface).

A file `a/b.rs` (or `a/b/mod.rs`) is module `a::b`. Every `crate::..`, `super::..` and
`self::..` path outside comments and outside `#[cfg(test)] mod` blocks is a reference; a reference from module A to module B is an edge between the two children of their
deepest common ancestor that contain them (so `world::query` -> `systems::def` is the edge
`world` -> `systems`, and `runtime::builder` -> `runtime::engine` is `builder` -> `engine`).
A cycle is a strongly connected set of such siblings. It is justified when the module doc
(`//!`) of one of its members has a line containing "import cycle" that names every other
member in backticks, e.g. "Import cycle with `engine`: ...".

Usage: import_cycles.py SRC_DIR [SRC_DIR...]   prints each cycle; exit 0 always (the caller
counts the unjustified ones from the lines starting with "UNJUSTIFIED").
"""
import os
import re
import sys


def module_of(root, path):
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib"):
        rel = rel[:-1]
    return tuple(rel)


def code_of(text):
    # Tests reference what they test: a `#[cfg(test)] mod` block is not an import of the module.
    out, i = [], 0
    for m in re.finditer(r"^#\[cfg\(test\)\]\s*\n\s*(pub\(crate\) )?mod \w+ \{", text, re.M):
        if m.start() < i:
            continue
        out.append(text[i : m.start()])
        depth, j = 0, m.end() - 1
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        i = j + 1
    out.append(text[i:])
    return "\n".join(re.sub(r"//.*", "", line) for line in "".join(out).splitlines())


def doc_of(text):
    return [l[3:].strip() for l in text.splitlines() if l.startswith("//!")]


def resolve(mods, here, path):
    """The deepest existing module a path names, or None."""
    parts = path.split("::")
    if parts[0] == "crate":
        base, rest = (), parts[1:]
    elif parts[0] in ("super", "self"):
        base = here
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                base = base[:-1]
            parts = parts[1:]
        rest = parts
    else:
        return None
    best = None
    cur = base
    if cur in mods:
        best = cur
    for p in rest:
        cur = cur + (p,)
        if cur in mods:
            best = cur
        else:
            break
    return best


def sccs(nodes, edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def cycles(root):
    files = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith(".rs"):
                p = os.path.join(d, f)
                files[module_of(root, p)] = p
    mods = set(files)
    edges, docs = {}, {}
    for m, p in files.items():
        text = open(p, encoding="utf-8").read()
        docs[m] = doc_of(text)
        for path in re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", code_of(text)):
            t = resolve(mods, m, path)
            if t is None or t == m:
                continue
            i = 0
            while i < min(len(m), len(t)) and m[i] == t[i]:
                i += 1
            if i >= len(m) or i >= len(t):
                continue  # one contains the other: a parent and its child
            a, b = m[: i + 1], t[: i + 1]
            edges.setdefault(a, set()).add(b)
    nodes = set(edges) | {b for bs in edges.values() for b in bs}
    found = []
    for comp in sccs(nodes, edges):
        if len(comp) < 2:
            continue
        names = sorted("::".join(c) for c in comp)
        justified = False
        for c in comp:
            others = [o[-1] for o in comp if o != c]
            for line in docs.get(c, []):
                if "import cycle" in line.lower() and all(f"`{o}`" in line for o in others):
                    justified = True
        found.append((names, justified))
    return found


def main():
    for root in sys.argv[1:]:
        for names, justified in cycles(root):
            tag = "justified" if justified else "UNJUSTIFIED"
            print(f"{tag} {root}: {' <-> '.join(names)}")


if __name__ == "__main__":
    main()
