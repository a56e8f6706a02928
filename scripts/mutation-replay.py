#!/usr/bin/python3
"""Replay one stratum of a seeded mutation draw made at an earlier commit on today's tree.

  scripts/mutation-replay.py COMMIT SEED COUNT STRATUM [--skip K] [--build build-mut]
                             [--test CMD] [--timeout S]

A stratum's draw (scripts/mutation-run.sh, ../shared/tools/mutants.py) is a function of the
seed and of the text of every file of the stratum: once any of those files has changed, the
same seed draws other mutants. This replays the draw of COMMIT: it computes the strata and
the shuffled candidates from COMMIT's files (`git show COMMIT:FILE`), and plants each
mutant into today's file at the line with the same text as at COMMIT (the one nearest the
old line number, the same column and replacement), skipping the first K mutants (the ones
an earlier run decided) and stopping after the stratum's share of mutants that compiled.
A mutant whose line is no longer in today's file is reported as "gone" (not counted). Each
is built into BUILD and tested with CMD (default: scripts/mutation-test.sh BUILD
BUILD/mutation-SEED); the output has mutants.py's form ("killed  " / "SURVIVED" lines), so
mutation-run.sh's summary reads it. Needs a clean src/; restores it after each mutant.
"""
import argparse
import glob
import importlib.util
import os
import random
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("commit")
ap.add_argument("seed", type=int)
ap.add_argument("count", type=int)
ap.add_argument("stratum")
ap.add_argument("--skip", type=int, default=0)
ap.add_argument("--build", default="build-mut")
ap.add_argument("--test")
ap.add_argument("--timeout", type=int, default=3000)
ap.add_argument("--mutants", default=os.environ.get("HWRT_MUTANTS", "../shared/tools/mutants.py"))
a = ap.parse_args()
spec = importlib.util.spec_from_file_location("mutants", a.mutants)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
test = a.test or f"scripts/mutation-test.sh {a.build} {a.build}/mutation-{a.seed}"
cuda = os.environ.get("HWRT_MUTATION_CUDA_FILES", "src/backends/cuda/cuda_api.c src/backends/cuda/cuda_cupti.c src/backends/cuda/cuda_launch.c src/backends/cuda/cuda_nvml.c src/backends/cuda/cuda_usage.c").split()


def git(*args):
    return subprocess.run(["git"] + list(args), check=True, capture_output=True, text=True).stdout


if subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "src"]).returncode:
    sys.exit("mutation-replay: src/ has uncommitted changes")
files = [f for f in git("ls-tree", "-r", "--name-only", a.commit, "src").split() if f.endswith(".c")]
groups = {}
for f in sorted(files):
    parts = f.split("/")
    d = "/".join(parts[1:3]) if parts[1] in ("backends", "plugins") and len(parts) > 3 else parts[1]
    if d == "backends/cuda" and f not in cuda:
        continue
    groups.setdefault(d, []).append(f)
old = {f: git("show", f"{a.commit}:{f}").split("\n") for fs in groups.values() for f in fs}
cand = {d: sum(len(m.candidates(old[f])) for f in fs) for d, fs in groups.items()}
total = sum(cand.values())
n = max(2, round(a.count * cand[a.stratum] / total))
rng = random.Random(a.seed)
pool = [(f, c) for f in groups[a.stratum] for c in m.candidates(old[f])]
rng.shuffle(pool)
print(f"== {a.stratum} ({n} of {cand[a.stratum]} candidates, draw of {a.commit}, first {a.skip} skipped)", flush=True)
build = f"cmake --build {a.build} -j2"
if m.sh(build, 900) != 0 or m.sh(test, a.timeout) != 0:
    sys.exit("mutation-replay: the unmutated tree must build and pass its tests first")
done = killed = survived = 0
for f, (i, s, e, rep) in pool:
    if done >= n:
        break
    text = old[f][i]
    try:
        orig = open(f).read()
    except OSError:
        orig = None
    cur = orig.split("\n") if orig is not None else []
    where = [j for j, l in enumerate(cur) if l == text]
    mutated = text[:s] + rep + text[e:]
    if not where:
        done += 1                       # drawn at COMMIT; counts in the stratum's share
        if done > a.skip:
            print(f"gone     {f}:{i + 1}: {text.strip()[:70]}  ->  {mutated.strip()[:70]}", flush=True)
        continue
    j = min(where, key=lambda x: abs(x - i))
    lines = list(cur)
    lines[j] = mutated
    try:
        with open(f, "w") as fh:
            fh.write("\n".join(lines))
        if m.sh(build, 900) != 0:
            continue                    # does not compile: not a mutant (as in mutants.py)
        done += 1
        if done <= a.skip:
            continue
        if m.sh(test, a.timeout) != 0:
            killed += 1
            verdict = "killed  "
        else:
            survived += 1
            verdict = "SURVIVED"
        print(f"{verdict} {f}:{j + 1}: {text.strip()[:70]}  ->  {mutated.strip()[:70]}", flush=True)
    finally:
        with open(f, "w") as fh:
            fh.write(orig)
m.sh(build, 900)
if killed + survived:
    print(f"{killed + survived} mutants: {killed} killed, {survived} survived")
