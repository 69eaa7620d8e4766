#!/usr/bin/env python3
"""An independent implementation of the state hash (format 2), from docs/state-hash.md.

Builds, byte by byte, the stream the specification defines for the fixed world of the test
`world::tests::the_state_hash_of_a_fixed_world_is_pinned` (engine/src/world/tests.rs) and
hashes it with the reference XXH3 (the `xxhash` package, bindings to the C library). Exits 1
when the digest differs from the test's pinned `GOLDEN`, so the Rust hasher, the
specification and the reference agree, or this check fails.
"""
import re
import struct
import sys
from pathlib import Path

import xxhash


def u64(v):
    return struct.pack("<Q", v)


def f32(v):
    return struct.pack("<f", v)


def text(s):
    b = s.encode()
    return u64(len(b)) + b


def xxh3(b):
    return xxhash.xxh3_64_intdigest(b)


def handle(slot, generation=1):
    return u64(generation << 32 | slot)


def golden_world_hash():
    # 40 entities spawned (slots 0..39, generation 1); slot 7 despawned.
    live = [i for i in range(40) if i != 7]
    stream = u64(len(live)) + u64(xxh3(b"".join(handle(i) for i in live)))
    # Columns in NAME order; each: name, rows, digest(handles in slot order, then values).
    names = [i for i in live if i % 4 == 0]
    digest = xxh3(b"".join(handle(i) for i in names) + b"".join(text(f"unit {i}") for i in names))
    stream += text("Name") + u64(len(names)) + u64(digest)
    digest = xxh3(
        b"".join(handle(i) for i in live) + b"".join(f32(i * 0.5) + f32(-float(i)) for i in live)
    )
    stream += text("Pos") + u64(len(live)) + u64(digest)
    # Resources: the word, their count, then each one's name and value, in name order.
    stream += text("resources") + u64(1) + text("Wind") + f32(2.5)
    return xxh3(stream)


def main():
    tests = Path(__file__).resolve().parent.parent / "engine/src/world/tests.rs"
    pinned = re.search(r"const GOLDEN: u64 = (0x[0-9a-f_]+);", tests.read_text())
    if not pinned:
        print(f"no GOLDEN constant in {tests}", file=sys.stderr)
        return 1
    pinned = int(pinned.group(1).replace("_", ""), 16)
    ours = golden_world_hash()
    print(f"reference {ours:#018x}, pinned {pinned:#018x}")
    if ours != pinned:
        print("the specification's reference and the pinned golden differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
