"""The allocation-trace writer of scripts/gen_trace_moe_train.py and gen_trace_hf_generate.py:
rows in the format of `hwrt-bench pool --trace` (docs/memory.md), header first."""


class Trace:
    def __init__(self):
        self.rows = ["action,id,size,stream"]
        self.live = {}
        self.uid = 0

    def alloc(self, tag, size, stream=0):
        """A new allocation of at least one byte on stream; returns its id."""
        self.uid += 1
        name = f"{tag}.{self.uid}"
        self.live[name] = stream
        self.rows.append(f"alloc,{name},{max(1, int(size))},{stream}")
        return name

    def free(self, name, stream=None):
        """Free name on stream (default: the stream it was allocated on)."""
        s = self.live.pop(name)
        self.rows.append(f"free,{name},,{s if stream is None else stream}")
