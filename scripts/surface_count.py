#!/usr/bin/env python3
"""Counts the pub items a game can reach through `lanegraph`, from rustdoc JSON.

Usage: surface_count.py ROOT.json [OTHER_CRATE.json ...] [--list FILE]

Reachable means: nameable by a path from the root crate (following re-exports into the other
crates given), or named in the signature of a reachable function, field or variant (a type
that leaks through a signature counts even where no path names it). Counted: modules, structs,
enums, unions, traits, free functions, inherent methods, a trait's own items, constants,
statics, type aliases, macros. Not counted: fields, variants, trait impls (`Display`,
`Clone`, ...). Items under a module named `hooks` are counted apart: that module is the one
explicitly named home for what the runtime's tools, tests and benches call and no game needs;
an item it shares with the game surface (through a signature) counts there.
Prints `surface N` (everything above), `surface-items K` (the same without associated items:
methods and associated constants and types, i.e. the Rust reference's "items"), `hooks M`, and
the per-kind and per-crate split, and `leaked L` with each type a reachable signature names
that no path outside `hooks` does (a game would meet a type it cannot name).
"""
import collections
import json
import sys

args = sys.argv[1:]
list_file = None
if "--list" in args:
    i = args.index("--list")
    list_file = args[i + 1]
    del args[i : i + 2]
docs = {}
for p in args:
    d = json.load(open(p))
    docs[d["index"][str(d["root"])]["name"]] = d
root_crate = next(iter(docs))


def kind_of(item):
    return next(iter(item["inner"]))


def resolve(crate, iid):
    """(crate, id) of the item's definition, following an external id into a loaded crate."""
    d = docs[crate]
    k = str(iid)
    if k in d["index"]:
        return crate, k
    p = d["paths"].get(k)
    if not p:
        return None
    ext = d["external_crates"].get(str(p["crate_id"]), {}).get("name")
    if ext not in docs:
        return None
    dd = docs[ext]
    for kk, pp in dd["paths"].items():
        if pp["crate_id"] == 0 and pp["path"][1:] == p["path"][1:] and kk in dd["index"]:
            return ext, kk
    return None


COUNTED = {"module", "struct", "enum", "union", "trait", "function", "constant", "static",
           "type_alias", "macro", "assoc_const", "assoc_type", "trait_alias", "proc_macro"}
counted = {}  # (crate, id) -> (bucket, kind, path)
named = set()  # (crate, id) a game names by a path outside hooks
queue = []


def referenced_ids(node, out):
    if isinstance(node, dict):
        if "id" in node and ("path" in node or "name" in node) and node["id"] is not None:
            out.append(node["id"])
        for v in node.values():
            referenced_ids(v, out)
    elif isinstance(node, list):
        for v in node:
            referenced_ids(v, out)


def visit(crate, iid, path, bucket, assoc=False, by_path=True):
    r = resolve(crate, iid)
    if r is None:
        return
    crate, k = r
    d = docs[crate]
    item = d["index"][k]
    kd = kind_of(item)
    inner = item["inner"][kd]
    if kd == "use":
        if inner.get("id") is None:
            return
        if inner.get("is_glob"):
            t = resolve(crate, inner["id"])
            if t is None:
                return
            tc, tk = t
            for c in docs[tc]["index"][tk]["inner"]["module"]["items"]:
                visit(tc, c, path, bucket)
        else:
            visit(crate, inner["id"], path + [inner["name"]], bucket, by_path=by_path)
        return
    name = item.get("name") or "?"
    if kd == "module" and name == "hooks":
        bucket = "hooks"
    if by_path and bucket == "surface":
        named.add((crate, k))
    prev = counted.get((crate, k))
    if prev is not None and (prev[0] == "surface" or bucket == "hooks"):
        return
    if kd in COUNTED:
        shown = "method" if assoc and kd == "function" else kd
        counted[(crate, k)] = (bucket, shown, "::".join(path + [name]))
    sig = []
    if kd == "module":
        for c in inner["items"]:
            visit(crate, c, path + [name], bucket)
    elif kd in ("struct", "enum", "union"):
        for imp in inner["impls"]:
            ii = d["index"][str(imp)]["inner"]["impl"]
            if ii["trait"] is None and not ii.get("is_synthetic") and not ii.get("blanket_impl"):
                for c in ii["items"]:
                    if d["index"][str(c)].get("visibility") == "public":
                        visit(crate, c, path + [name], bucket, assoc=True)
        fields = []
        if kd == "struct":
            plain = inner["kind"].get("plain") if isinstance(inner["kind"], dict) else None
            tup = inner["kind"].get("tuple") if isinstance(inner["kind"], dict) else None
            fields = (plain or {}).get("fields", []) + [f for f in (tup or []) if f is not None]
        elif kd == "enum":
            for v in inner["variants"]:
                vk = d["index"][str(v)]["inner"]["variant"]["kind"]
                if isinstance(vk, dict):
                    fields += vk.get("struct", {}).get("fields", []) + [
                        f for f in vk.get("tuple", []) if f is not None]
        for f in fields:
            fi = d["index"][str(f)]
            if fi.get("visibility") == "public" or kd == "enum":
                referenced_ids(fi["inner"], sig)
    elif kd == "trait":
        for c in inner["items"]:
            visit(crate, c, path + [name], bucket, assoc=True)
    elif kd in ("function", "constant", "static", "type_alias", "assoc_const", "assoc_type"):
        referenced_ids(inner, sig)
    for s in sig:
        queue.append((crate, s, path, bucket))
    return


visit(root_crate, docs[root_crate]["root"], [], "surface")
while queue:
    c, s, p, b = queue.pop()
    visit(c, s, p, b, by_path=False)

# A type a game meets in a signature should be one it can name (from the game surface).
TYPES = {"struct", "enum", "union", "trait", "type_alias"}
leaked = sorted(p for key, (b, kd, p) in counted.items() if b == "surface" and kd in TYPES and key not in named)

totals = collections.Counter(b for b, _, _ in counted.values())
kinds = collections.Counter((b, kd) for b, kd, _ in counted.values())
crates = collections.Counter((b, c) for (c, _), (b, _, _) in counted.items())
ASSOC = {"method", "assoc_const", "assoc_type"}
items_only = sum(1 for b, kd, _ in counted.values() if b == "surface" and kd not in ASSOC)
print(f"surface {totals['surface']}")
print(f"surface-items {items_only}")
print(f"hooks {totals['hooks']}")
print(f"leaked {len(leaked)}")
for p in leaked:
    print(f"  leaked: {p}")
for b in ("surface", "hooks"):
    print(b, "by kind:", ", ".join(f"{k} {n}" for (bb, k), n in sorted(kinds.items()) if bb == b))
    print(b, "by crate:", ", ".join(f"{c} {n}" for (bb, c), n in sorted(crates.items()) if bb == b))
if list_file:
    with open(list_file, "w") as f:
        for (c, _), (b, kd, p) in sorted(counted.items(), key=lambda x: x[1]):
            f.write(f"{b} {c} {kd} {p}\n")
