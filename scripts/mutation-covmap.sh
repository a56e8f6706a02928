#!/bin/bash
# The per-test coverage map of a mutation run (scripts/mutation-test.sh reads it; issue 25,
# docs/RELIABILITY.md "Mutation score"): for every CTest test of the plain suite, the lines of
# src/ it executes, measured with gcov in a coverage build.
#
#   scripts/mutation-covmap.sh [MAP]      (default build-mut/covmap.json; run it under nice)
#
# Builds COVBUILD (default build-cov: -DHWRT_COVERAGE=ON, the build scripts/coverage.sh uses;
# it clears its counters: do not run both at once) and runs each test of `ctest -N` alone (`ctest -R '^NAME$'`, which also runs the
# fixtures it requires), with GCOV_PREFIX set to a directory of its own, so that the counters
# every process of that test writes at exit land apart from the other tests'. Two tests run
# at a time, except the RUN_SERIAL / RESOURCE_LOCK ones and those whose processes do not
# inherit the environment (HWRT_COVMAP_SERIAL, default the multi-host MPI tests: their remote
# ranks start with `env -i` and write their counters into COVBUILD itself): those run one at a
# time afterwards, COVBUILD's own counters cleared before and read after each. After each test
# gcov reads its counters and keeps the src/ lines with a count above zero.
#
# The map (JSON) holds: key (the committed tree minus docs/, top-level *.md and
# scripts/mutation-*: what the tests and the library are built from; mutation-test.sh uses the
# map only when its key is HEAD's), instrumented (every src/ line gcov has a counter for),
# lines (file -> line -> indices of the tests executing it), tests, and unmeasured: the tests
# whose lines are not known, run for every covered mutant after the selected ones (a test
# that failed in the coverage build, whose counters stop where it stopped: install_prefix,
# whose installed copy an instrumented build fails by design; a test that wrote no counter
# of src/; install_pip, which builds its own uninstrumented copy of the library).
# Needs a clean tree (committed src/, tests/, ...): the map describes HEAD.
set -u
ROOT=$(git rev-parse --show-toplevel)
cd "$ROOT" || exit 2
if [ "${1:-}" = --key ]; then       # the map's key for HEAD (mutation-test.sh compares it)
  git ls-tree -r HEAD | grep -vE $'\t(docs/|[^/]*\\.md$|scripts/mutation-)' | git hash-object --stdin
  exit
fi
MAP=${1:-build-mut/covmap.json}
COV=${HWRT_COVMAP_BUILD:-build-cov}
SERIAL=${HWRT_COVMAP_SERIAL:-^mpi_hosts}
JOBS=${HWRT_COVMAP_JOBS:-2}
PY=/usr/bin/python3

dirty=$(git status --porcelain -- src tests include python tools examples cmake bench CMakeLists.txt)
if [ -n "$dirty" ]; then
  echo "mutation-covmap: uncommitted changes; the map would not describe HEAD:" >&2
  echo "$dirty" >&2
  exit 2
fi
start=$SECONDS
cmake -S . -B "$COV" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHWRT_COVERAGE=ON >/dev/null || exit 2
cmake --build "$COV" -j2 >/dev/null || exit 2
echo "mutation-covmap: $COV built in $((SECONDS - start)) s"
mkdir -p "$(dirname "$MAP")"
exec $PY - "$ROOT" "$COV" "$MAP" "$SERIAL" "$JOBS" "$(scripts/mutation-covmap.sh --key)" <<'EOF'
import concurrent.futures, json, os, re, shutil, subprocess, sys, time
root, cov, out, serial_re, jobs, key = sys.argv[1:7]
cov = os.path.abspath(cov)
jobs = int(jobs)
work = os.path.join(cov, "covmap")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
t0 = time.time()

info = json.loads(subprocess.run(["ctest", "--show-only=json-v1"], cwd=cov, check=True,
                                 capture_output=True, text=True).stdout)
tests, serial = [], set()
for t in info["tests"]:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if props.get("DISABLED"):
        continue
    tests.append(t["name"])
    if props.get("RUN_SERIAL") or props.get("RESOURCE_LOCK") or re.search(serial_re, t["name"]):
        serial.add(t["name"])
UNBUILT = {"install_pip"}            # builds its own, uninstrumented copy: nothing to measure

def gcno_of(gcda_rel):
    return os.path.join(cov, gcda_rel[:-5] + ".gcno")

def read_lines(gcda_files):
    """src/ file -> set of lines with a count above zero, instrumented lines aside."""
    hit, inst = {}, {}
    for i in range(0, len(gcda_files), 64):
        r = subprocess.run(["gcov", "--json-format", "--stdout"] + gcda_files[i:i + 64],
                           cwd=work, capture_output=True, text=True)
        for doc in r.stdout.splitlines():
            doc = doc.strip()
            if not doc.startswith("{"):
                continue
            for f in json.loads(doc).get("files", []):
                name = os.path.relpath(os.path.join(root, f["file"]), root) \
                    if not os.path.isabs(f["file"]) else os.path.relpath(f["file"], root)
                if not name.startswith("src/"):
                    continue
                for ln in f["lines"]:
                    inst.setdefault(name, set()).add(ln["line_number"])
                    if ln["count"] > 0:
                        hit.setdefault(name, set()).add(ln["line_number"])
    return hit, inst

def gather(base):
    """Copy the .gcda files under base (paths as in COVBUILD) into a scratch tree beside
    links to their .gcno, and read them."""
    scratch = os.path.join(work, "scratch-" + str(time.monotonic_ns()))
    files = []
    for dp, _, fs in os.walk(base):
        if dp.startswith(work) and base == cov:
            continue
        for f in fs:
            rel = os.path.relpath(os.path.join(dp, f), base)
            if not f.endswith(".gcda") or not os.path.exists(gcno_of(rel)):
                continue
            dst = os.path.join(scratch, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(dp, f), dst)
            os.symlink(gcno_of(rel), dst[:-5] + ".gcno")
            files.append(dst)
    hit, inst = read_lines(files)
    shutil.rmtree(scratch, ignore_errors=True)
    return hit, inst

def run_test(name, prefix, timeout=1200):
    env = dict(os.environ)
    if prefix:
        env["GCOV_PREFIX"] = prefix
    t = time.time()
    r = subprocess.run(["ctest", "-R", "^" + re.escape(name) + "$", "--timeout", "900",
                        "--output-on-failure"], cwd=cov, env=env, capture_output=True, text=True)
    ok = r.returncode == 0 and "100% tests passed" in r.stdout
    with open(os.path.join(work, name + ".log"), "w") as f:
        f.write(r.stdout + r.stderr)
    return ok, time.time() - t

def own_gcda():
    return [os.path.join(dp, f) for dp, _, fs in os.walk(cov) for f in fs
            if f.endswith(".gcda") and not dp.startswith(work)]

results, instrumented = {}, {}
def measure(name, use_prefix):
    prefix = os.path.join(work, "p", name)
    ok, secs = run_test(name, prefix if use_prefix else None)
    tree = prefix + cov if use_prefix else cov
    hit, inst = gather(tree) if os.path.isdir(tree) else ({}, {})
    shutil.rmtree(prefix, ignore_errors=True)
    return name, ok, secs, hit, inst

for f in own_gcda():
    os.remove(f)
par = [t for t in tests if t not in serial and t not in UNBUILT]
ser = [t for t in tests if t in serial and t not in UNBUILT]
done = 0
with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
    for name, ok, secs, hit, inst in ex.map(lambda n: measure(n, True), par):
        results[name] = (ok, secs, hit)
        for k, v in inst.items():
            instrumented.setdefault(k, set()).update(v)
        done += 1
        print(f"[{done}/{len(tests)}] {name}: {'ok' if ok else 'FAILED'} {secs:.0f} s, "
              f"{sum(map(len, hit.values()))} src lines", flush=True)
leaked = own_gcda()
if leaked:
    sys.exit("mutation-covmap: tests run with GCOV_PREFIX wrote counters into %s (%s): name them "
             "in HWRT_COVMAP_SERIAL" % (cov, leaked[0]))
for name in ser:
    for f in own_gcda():
        os.remove(f)
    name, ok, secs, hit, inst = measure(name, False)
    # the processes that kept the environment wrote under the prefix: run_test without one
    # sends every process's counters to COVBUILD, read there
    results[name] = (ok, secs, hit)
    for k, v in inst.items():
        instrumented.setdefault(k, set()).update(v)
    done += 1
    print(f"[{done}/{len(tests)}] {name} (serial): {'ok' if ok else 'FAILED'} {secs:.0f} s, "
          f"{sum(map(len, hit.values()))} src lines", flush=True)
for f in own_gcda():
    os.remove(f)

names = sorted(results)
index = {n: i for i, n in enumerate(names)}
lines = {}
unmeasured = sorted(UNBUILT & set(tests))
for n in names:
    ok, secs, hit = results[n]
    if not ok or not hit:
        unmeasured.append(n)
        continue
    for f, ls in hit.items():
        d = lines.setdefault(f, {})
        for l in ls:
            d.setdefault(str(l), []).append(index[n])
doc = {"key": key, "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "seconds": round(time.time() - t0),
       "tests": names, "unmeasured": sorted(set(unmeasured)),
       "test_seconds": {n: round(results[n][1], 1) for n in names},
       "instrumented": {f: sorted(v) for f, v in sorted(instrumented.items())},
       "lines": lines}
tmp = out + ".tmp"
with open(tmp, "w") as f:
    json.dump(doc, f)
os.replace(tmp, out)
print(f"mutation-covmap: {len(names)} tests measured, unmeasured: {' '.join(doc['unmeasured'])}; "
      f"{sum(len(v) for v in instrumented.values())} instrumented src lines in {len(instrumented)} "
      f"files, {sum(len(v) for v in lines.values())} executed; {doc['seconds']} s -> {out}")
EOF
