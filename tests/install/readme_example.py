#!/usr/bin/env python3
"""readme_example.py README.md LANG: print README's example for LANG (c or python): the
fenced block that follows the line `<!-- example: LANG -->`. Exits 1 if there is none."""
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"<!-- example: %s -->\s*\n```\w*\n(.*?)\n```" % re.escape(sys.argv[2]),
              text, re.S)
if not m:
    sys.exit(f"{sys.argv[1]}: no block after <!-- example: {sys.argv[2]} -->")
print(m.group(1))
