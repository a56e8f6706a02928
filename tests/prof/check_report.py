#!/usr/bin/env python3
"""Check the DOM Chromium rendered from report.html for the known workload.

usage: check_report.py report.html dom.html memory_record.csv report.png"""
import csv
import os
import re
import sys
from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.lanes, self.rects, self.mem, self.rows, self.body = [], 0, [], [], {}
        self.stats, self.headline, self._in = {}, "", None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if tag == "g" and a.get("class") == "lane":
            self.lanes.append(a.get("data-lane", ""))
        if tag == "rect" and a.get("class") == "span":
            self.rects += 1
        if tag == "path" and a.get("class") == "mem-curve":
            self.mem.append(int(a.get("data-points", "0")))
        if tag == "tr" and a.get("class") == "op-row":
            self.rows.append(a.get("data-op", ""))
        if tag == "div" and a.get("id") == "render-stats":
            self.stats = a
        if tag == "div" and a.get("class") == "headline":
            self._in = "headline"

    def handle_data(self, data):
        if self._in == "headline":
            self.headline += data

    def handle_endtag(self, tag):
        if tag == "div":
            self._in = None


passed = failed = 0


def expect(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def main():
    report, dom_path, mem_csv, png = sys.argv[1:5]
    src = open(report).read()
    expect(not re.search(r"<script[^>]+src=|<link[^>]+href=|<img[^>]+src=|@import|url\(", src),
           "report.html references an external resource")
    expect(os.path.getsize(dom_path) > 0, "chromium produced no DOM (see chromium.log)")
    d = Dom()
    d.feed(open(dom_path).read())
    expect(d.body.get("data-rendered") == "1", "the script did not finish rendering")
    want = ["Host pid", "compute / stream 1", "copy H2D / stream 1", "copy D2H / stream 1",
            "compute / stream 2", "stream wait / stream 2"]
    for w in want:
        expect(sum(w in lane for lane in d.lanes) == 1, "lane %r in %r" % (w, d.lanes))
    expect(len(d.lanes) == len(want), "lanes %r" % d.lanes)
    with open(mem_csv, newline="") as f:
        nmem = len(list(csv.DictReader(f)))
    expect(d.mem == [nmem] and nmem == 10, "memory curve points %r vs %d records" % (d.mem, nmem))
    ops = {"MemcpyHtoD", "MemcpyDtoH", "MemcpyDtoD", "Memset", "Fill", "MatMul", "Add",
           "EventWait"}
    expect(set(d.rows) == ops and len(d.rows) == len(ops), "op rows %r" % d.rows)
    expect(d.rects >= len(want), "only %d spans drawn for %d lanes" % (d.rects, len(want)))
    expect(d.stats.get("data-lanes") == str(len(want)), "render stats %r" % d.stats)
    expect(d.headline.startswith("Verdict: ") and "Memcpy" in d.headline,
           "verdict headline %r" % d.headline)
    ok_png = os.path.exists(png) and os.path.getsize(png) > 20000 and \
        open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    expect(ok_png, "screenshot missing or blank")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
