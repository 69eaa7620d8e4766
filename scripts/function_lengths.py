#!/usr/bin/env python3
"""Functions longer than a screen in the given source folders.

Usage: function_lengths.py LIMIT ALLOWED_FILE:NAME[,...] FOLDER...

Prints one line per function over LIMIT lines (from its `fn` line to its closing brace at the
same indentation; declarations without a body are skipped): `LONG path name lines` for one not
in the allowed list, `ALLOWED path name lines` for one that is, and `STALE file:name` for an
allowed entry that no longer names a long function (so the list cannot outlive its reason).
"""
import os
import re
import sys

FN = re.compile(r'^(\s*)(pub(\([^)]*\))? )?(const )?(async )?(unsafe )?fn (\w+)')


def long_functions(path, limit):
    lines = open(path, encoding='utf-8').read().split('\n')
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        k = i
        while k < len(lines) - 1 and not (lines[k].rstrip().endswith('{') or lines[k].rstrip().endswith(';')):
            k += 1
        if lines[k].rstrip().endswith(';'):
            continue
        indent = m.group(1)
        for j in range(k + 1, len(lines)):
            if lines[j] == indent + '}':
                if j - i + 1 > limit:
                    yield m.group(7), j - i + 1
                break


def main():
    limit = int(sys.argv[1])
    allowed = {tuple(a.split(':', 1)) for a in sys.argv[2].split(',') if a}
    seen = set()
    for folder in sys.argv[3:]:
        for root, _, files in os.walk(folder):
            for f in sorted(files):
                if not f.endswith('.rs'):
                    continue
                path = os.path.join(root, f)
                for name, n in long_functions(path, limit):
                    key = (path, name)
                    if key in allowed:
                        seen.add(key)
                        print(f'ALLOWED {path} {name} {n}')
                    else:
                        print(f'LONG {path} {name} {n}')
    for path, name in sorted(allowed - seen):
        print(f'STALE {path}:{name}')


if __name__ == '__main__':
    main()
