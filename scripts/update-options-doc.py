#!/usr/bin/env python3
"""Replaces the tables of docs/options.md with `mncc options --markdown`.

The tables sit between the BEGIN and END markers; the text around them is
written by hand. test/pipeline/options-doc.test fails when they are stale.
"""

import subprocess
import sys

BEGIN = "<!-- BEGIN tables generated from OptionTable.def -->\n"
END = "<!-- END tables generated from OptionTable.def -->\n"


def main():
    mncc, doc = sys.argv[1], sys.argv[2]
    tables = subprocess.run([mncc, "options", "--markdown"], check=True,
                            capture_output=True, text=True).stdout
    with open(doc) as handle:
        text = handle.read()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    with open(doc, "w") as handle:
        handle.write(text[:start] + tables + text[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
