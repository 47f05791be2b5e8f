"""Checks that the repository paths a doc names in backquotes exist.

check_doc_paths.py SOURCE_ROOT [--installed PATH]... DOC...

A backquoted word with a slash and nothing but path characters (`lib/emu`,
`mncc/emu/Simulator.h`, `examples/plugins`) must name a file or folder of
the source tree, taken from its root, include/ (headers) or lib/. Words
under a build tree (build/, build-fuzz/) and the --installed paths (where `make install` puts things)
are not in the source tree and are skipped. Prints each path that does not
exist; the exit status is 1 if any does not.
"""
import os
import re
import sys

args = sys.argv[1:]
source_root = args.pop(0)
installed = set()
docs = []
while args:
    word = args.pop(0)
    if word == "--installed":
        installed.add(args.pop(0))
    else:
        docs.append(word)

missing = 0
checked = 0
for doc in docs:
    with open(os.path.join(source_root, doc)) as f:
        text = f.read()
    for path in sorted(set(re.findall(r"`([A-Za-z0-9_.-]+/[A-Za-z0-9_./-]*)`",
                                      text))):
        if path.split("/")[0].startswith("build") or \
                path.rstrip("/") in installed:
            continue
        checked += 1
        if not any(os.path.exists(os.path.join(source_root, base, path))
                   for base in ("", "include", "lib")):
            print("%s: `%s` does not exist" % (doc, path))
            missing += 1
print("%d paths checked, %d missing" % (checked, missing))
sys.exit(1 if missing else 0)
