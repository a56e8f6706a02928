"""The allocation-trace writer of the scripts/gen_trace_*.py generators: rows in the
format of `hwrt-bench pool --trace` (docs/memory.md), header first, written as they
come. An allocation is named by its tag and a number (alloc), or by the caller (named)."""


class Trace:
    def __init__(self, out, sep="."):
        """out: a text stream; sep: between an allocation's tag and its number."""
        self.out = out
        self.sep = sep
        self.live = {}                  # id -> the stream it was allocated on
        self.uid = 0
        self.n = 0                      # rows written, header not counted
        out.write("action,id,size,stream\n")

    def alloc(self, tag, size, stream=0):
        """A new allocation of at least one byte on stream, numbered; returns its id."""
        self.uid += 1
        return self.named(f"{tag}{self.sep}{self.uid}", size, stream)

    def named(self, name, size, stream=0):
        """A new allocation called name (not live already) on stream; returns name."""
        assert name not in self.live, name
        self.live[name] = stream
        self.out.write(f"alloc,{name},{max(1, int(size))},{stream}\n")
        self.n += 1
        return name

    def free(self, name, stream=None):
        """Free name on stream (default: the stream it was allocated on)."""
        s = self.live.pop(name)
        self.out.write(f"free,{name},,{s if stream is None else stream}\n")
        self.n += 1
