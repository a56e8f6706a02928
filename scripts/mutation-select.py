#!/usr/bin/python3
"""The tests a mutant on FILE:LINE is run against (scripts/mutation-test.sh; the map is
scripts/mutation-covmap.sh's).

  mutation-select.py MAP FILE LINE DIR_REGEX KEY

Prints "KIND REASON" (KIND: covered, not-covered or all), then three lines: the ctest -R
regexes of phase 1 (covering tests whose name DIR_REGEX matches), phase 2 (the other covering
tests) and phase 3 (the map's unmeasured tests); an empty line is an empty phase. KIND all
(no map, a map of another tree, or a line gcov has no counter for) prints no regex: run
everything."""
import json
import re
import sys


def out(kind, why, *phases):
    print(kind, why)
    for p in phases:
        print("^(" + "|".join(re.escape(t) for t in p) + ")$" if p else "")
    sys.exit(0)


path, f, line, dre, key = sys.argv[1:6]
try:
    with open(path) as fh:
        m = json.load(fh)
except (OSError, ValueError):
    out("all", "no coverage map (%s)" % path)
if m.get("key") != key:
    out("all", "the coverage map %s is of another tree (stale)" % path)
if not line.isdigit() or int(line) not in set(m["instrumented"].get(f, [])):
    out("all", "gcov has no counter for %s:%s" % (f, line))
names = m["tests"]
cover = [names[i] for i in m["lines"].get(f, {}).get(line, [])]
unm = m["unmeasured"]
if not cover:
    out("not-covered", "no measured test executes %s:%s" % (f, line), [], [], unm)
p1 = [t for t in cover if re.search(dre, t)]
p2 = [t for t in cover if t not in p1]
out("covered", "%d of %d measured tests execute %s:%s, %d unmeasured"
    % (len(cover), len(set(names) - set(unm)), f, line, len(unm)), p1, p2, unm)
