#!/usr/bin/env python3
"""Check the DOM Chromium rendered from report.html for the known workload.

Every op is its own span in the embedded data (the device lanes hold one span per row of
op_summary.csv) and is drawn at full view (the workload is small: no level of detail
merges); a second DOM, opened with #t=A,B, draws only the spans of that window; axis
labels stay inside the chart (the last one anchored at its end); the memory chart has time
labels; the stats line the tests read is hidden; the screenshot is not blank.

usage: check_report.py report.html dom.html memory_record.csv report.png [zoom_dom.html A B]"""
import json
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
        self.ticks, self.mem_ticks, self._svg = [], 0, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if tag == "svg":
            self._svg = a.get("id") or a.get("class")
        if tag == "text" and a.get("class") == "tick":
            if self._svg == "timeline-svg":
                self.ticks.append((float(a.get("x", "0")), a.get("text-anchor")))
            elif self._svg == "mem-chart":
                self.mem_ticks += 1
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


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from checklib import check as expect, summary  # noqa: E402  (the shared helpers)


def main():
    report, dom_path, mem_csv, png = sys.argv[1:5]
    if len(sys.argv) > 7:
        sys.argv[5:8] = sys.argv[5:8]
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
    try:                                   # Debian's python3-pil, when there
        from PIL import Image
        im = Image.open(png).convert("RGB")
        colours = im.getcolors(1 << 20) or []
        ok_png = ok_png and len(colours) >= 8 and max(c for c, _ in colours) < 0.995 * im.width * im.height
    except ImportError:
        pass
    expect(ok_png, "screenshot missing or blank")
    # every op its own span, all drawn at full view
    data = json.loads(re.search(r"const DATA = (\{.*?\});\n", src, re.S).group(1))
    total = sum(len(L["spans"]) for L in data["lanes"])
    dev = sum(len(L["spans"]) for L in data["lanes"] if L["kind"] == "device")
    with open(os.path.join(os.path.dirname(report), "op_summary.csv"), newline="") as f:
        nop = len(list(csv.DictReader(f)))
    expect(dev == nop, "device spans %d vs %d ops in op_summary.csv (merged?)" % (dev, nop))
    expect(d.stats.get("data-spans") == str(total) and d.rects == total and
           d.stats.get("data-drawn") == str(total), "drawn %d of %d spans: %r" % (d.rects, total, d.stats))
    # axes: labels inside the chart, the last one anchored at its end; memory time labels
    expect(len(d.ticks) >= 4 and all(0 <= x <= 1200 for x, _ in d.ticks), "ticks %r" % d.ticks)
    expect(all(a == "end" for x, a in d.ticks if x > 1200 - 40 - 30), "edge ticks %r" % d.ticks)
    expect(d.mem_ticks >= 4, "memory chart time labels: %d" % d.mem_ticks)
    expect("#render-stats{display:none}" in src, "the stats line is visible")
    if len(sys.argv) > 7:                  # the zoomed view
        zd, a, b = sys.argv[5], float(sys.argv[6]), float(sys.argv[7])
        z = Dom()
        z.feed(open(zd).read())
        inwin = sum(1 for L in data["lanes"] for s0 in L["spans"] if not (s0[0] + s0[1] < a or s0[0] > b))
        expect(z.body.get("data-rendered") == "1" and z.stats.get("data-visible") == str(inwin) and
               0 < z.rects <= inwin < total, "zoom %g..%g: %d drawn, %r visible, %d in window of %d" %
               (a, b, z.rects, z.stats.get("data-visible"), inwin, total))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
