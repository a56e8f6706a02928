"""Every public callable of the hwrt module has a signature, and the stubs match it.

Generic on purpose: it walks hwrt and its submodules, so a function added in C is checked
without editing this file. A builtin gets a signature only from a text signature at the
head of its docstring (the "sig=" convention of the C method tables):
    "name($module, a, b=1)\\n--\\n\\n<doc>"     ($self for methods; Type(...) for a type)
Exception classes are left out: CPython's own (ValueError, ...) have none either, and
hwrt's take any arguments like them."""
import inspect
import os
import subprocess
import sys
import types

import pytest

import hwrt

def _modules(mod, seen):
    """mod and, depth first, every hwrt submodule reachable from it (hwrt.device_context.ascend
    as well as hwrt.runtime), each once."""
    seen.add(id(mod))
    out = [mod]
    for m in vars(mod).values():
        if isinstance(m, types.ModuleType) and m.__name__.startswith("hwrt.") and id(m) not in seen:
            out += _modules(m, seen)
    return out


MODULES = _modules(hwrt, set())


def ours(obj):
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "hwrt" or \
        getattr(getattr(obj, "__self__", None), "__name__", "").startswith("hwrt")


STRUCTSEQ_METHODS = set(vars(type(sys.version_info)))   # CPython's own struct sequence


def callables():
    """(qualified name, object) for every function, class and method hwrt defines."""
    seen, out = set(), []
    for mod in MODULES:
        for name, obj in sorted(vars(mod).items()):
            if name.startswith("__") or id(obj) in seen or isinstance(obj, types.ModuleType):
                continue
            if isinstance(obj, type):
                if issubclass(obj, BaseException) or not obj.__module__.startswith("hwrt"):
                    continue
                seen.add(id(obj))
                out.append((f"{obj.__module__}.{obj.__qualname__}", obj))
                for attr, meth in sorted(vars(obj).items()):
                    # methods from the type's method table (slot wrappers such as __add__
                    # get their signature from CPython itself; so do, or not, the methods
                    # CPython gives every struct sequence, such as DeviceInfo.__reduce__)
                    if issubclass(obj, tuple) and attr in STRUCTSEQ_METHODS:
                        continue
                    if isinstance(meth, (types.MethodDescriptorType, types.ClassMethodDescriptorType)):
                        out.append((f"{obj.__module__}.{obj.__name__}.{attr}", meth))
            elif isinstance(obj, types.BuiltinFunctionType) and ours(obj):
                seen.add(id(obj))   # named by the module it was made for (hwrt.memory_stats
                out.append((f"{obj.__module__ or mod.__name__}.{name}", obj))  # is runtime's)
    return out


ALL = callables()


def test_walk_finds_the_api():
    names = {n for n, _ in ALL}
    assert len(ALL) > 80, len(ALL)
    for n in ("hwrt.set_device", "hwrt.Tensor", "hwrt.Tensor.asnumpy", "hwrt.runtime.Stream",
              "hwrt.runtime.Stream.synchronize", "hwrt.runtime.memory_stats",
              "hwrt.communication.init", "hwrt.profiler.start", "hwrt.offload.evict"):
        assert n in names, n


@pytest.mark.parametrize("name,obj", ALL, ids=[n for n, _ in ALL])
def test_signature(name, obj):
    try:
        sig = inspect.signature(obj)
    except (ValueError, TypeError) as e:
        pytest.fail(f"inspect.signature({name}) fails ({e}): start its C docstring with a "
                    f"text signature, \"{name.rsplit('.', 1)[-1]}($module, ...)\\n--\\n\\n\" "
                    f"($self for a method, \"Type(...)\\n--\\n\\n\" in a tp_doc)")
    # the text must not be left in __doc__ (a malformed marker would leave it there)
    assert "\n--\n" not in (obj.__doc__ or ""), f"{name}: text signature not parsed"
    assert obj.__doc__, f"{name}: no docstring after the signature"


class _Probe:
    """A value no hwrt converter accepts."""


@pytest.mark.parametrize("name,obj", [(n, o) for n, o in ALL
                                      if not isinstance(o, types.MethodDescriptorType)],
                         ids=[n for n, o in ALL if not isinstance(o, types.MethodDescriptorType)])
def test_keywords_are_real(name, obj, sim):
    """A parameter the signature says may be passed by keyword is accepted by the C
    parser under that name (its kwlist): any error may follow (the probe is no valid
    value, other arguments are missing), but not 'invalid keyword argument'."""
    params = inspect.signature(obj).parameters.values()
    for p in params:
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        try:
            obj(**{p.name: _Probe()})
        except TypeError as e:
            msg = str(e)
            assert "invalid keyword argument" not in msg and "no keyword arguments" not in msg, \
                f"{name}: the signature names the keyword {p.name!r}, the C code does not: {msg}"
        except Exception:   # noqa: BLE001  (rejected for another reason: fine)
            pass


def test_stubs_match_the_module(tmp_path):
    """mypy's stubtest: the .pyi stubs beside the module list every public name with the
    parameters (names, kinds, defaults) the runtime signatures have."""
    try:
        import mypy.stubtest  # noqa: F401
    except ImportError:
        pytest.fail("mypy is missing (Debian: python3-mypy, installed by scripts/deps.sh test)")
    pkg = os.path.dirname(hwrt.__file__)
    assert os.path.exists(os.path.join(pkg, "py.typed")), f"no py.typed in {pkg}"
    allow = tmp_path / "allow.txt"              # the MPI plugin beside a pip-installed
    allow.write_text("hwrt.libhwrt_mpi\n" if  # module is a .so, but no Python module
                     os.path.exists(os.path.join(pkg, "libhwrt_mpi.so")) else "")
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "--allowlist", str(allow),
                        "hwrt"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
