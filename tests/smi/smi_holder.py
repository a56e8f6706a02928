"""What the hwrt-smi cross-process tests share (tests/smi/test_smi_cuda.py on a fake NVML,
tests/ascend_dcmi/test_smi_ascend.py on a fake DCMI): a real process (`sleep 60`) standing
for one that runs hwrt, the private usage-board folder (mode 0700) its pool figures are
published in, the way the backend's report_usage writes them (one file per process and
device, mode 0600: "<magic> 1 <process start time> <reserved> <allocated>"), and CSV rows."""
import os, shutil, subprocess, tempfile


def start_time(pid):
    """The process's start time in clock ticks (/proc/<pid>/stat field 22)."""
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


class Holder:
    def __init__(self, prefix):
        self.board = tempfile.mkdtemp(prefix=prefix)
        os.chmod(self.board, 0o700)
        self.proc = subprocess.Popen(["sleep", "60"])
        self.pid = self.proc.pid

    def publish(self, device, magic, reserved, allocated):
        """Write the holder's figures for device (the file name's tail); returns the path."""
        path = os.path.join(self.board, "%d-%s" % (self.pid, device))
        with open(path, "w") as f:
            f.write("%s 1 %d %d %d\n" % (magic, start_time(self.pid), reserved, allocated))
        os.chmod(path, 0o600)
        return path

    def close(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.board, ignore_errors=True)


def csv_rows(text):
    """hwrt-smi's CSV (noheader) as lists of stripped fields."""
    return [[x.strip() for x in r.split(",")] for r in text.strip().splitlines()]
