"""Build the hwrt Python package (pyproject.toml holds the metadata).

The extension (python/src/*.c) becomes the package itself, hwrt/__init__.<soabi>.so, so
that hwrt/*.pyi and hwrt/py.typed sit beside it. libhwrt is built first with CMake, as
the static library only (HWRT_BUILD_TOOLS/EXAMPLES/PYTHON/TESTS off), installed into a
staging prefix, and linked into the extension with the flags its pkg-config file gives
for static linking; its symbols are not re-exported (--exclude-libs). libhwrt_mpi.so, the
MPI plugin libhwrt loads at run time from the directory of the code that holds libhwrt,
is copied next to the extension when MPI was found.

Environment: CMAKE (the cmake to run), CMAKE_BUILD_PARALLEL_LEVEL (jobs), HWRT_CMAKE_ARGS
(more -D options for libhwrt's configure)."""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    text = open(os.path.join(ROOT, "include", "hwrt", "hwrt_version.h")).read()
    parts = [re.search(r"#define HWRT_VERSION_%s +(\d+)" % p, text).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def run(cmd, **kw):
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


class CMakeBuildExt(build_ext):
    def build_extension(self, ext):
        tmp = os.path.abspath(self.build_temp)
        cmake_build, stage = os.path.join(tmp, "libhwrt"), os.path.join(tmp, "stage")
        cmake = os.environ.get("CMAKE", "cmake")
        for tool, pkg in ((cmake, "cmake"), ("pkg-config", "pkg-config")):
            if not shutil.which(tool):
                sys.exit(f"hwrt: building the package needs {tool} (Debian: apt-get install {pkg})")
        run([cmake, "-S", ROOT, "-B", cmake_build, "-DCMAKE_BUILD_TYPE=Release",
             "-DHWRT_BUILD_TOOLS=OFF", "-DHWRT_BUILD_EXAMPLES=OFF", "-DHWRT_BUILD_PYTHON=OFF",
             "-DHWRT_BUILD_TESTS=OFF", "-DCMAKE_INSTALL_PREFIX=" + stage,
             "-DCMAKE_INSTALL_LIBDIR=lib"] + shlex.split(os.environ.get("HWRT_CMAKE_ARGS", "")))
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        run([cmake, "--build", cmake_build, "-j", jobs])
        run([cmake, "--install", cmake_build, "--prefix", stage])
        libdir = os.path.join(stage, "lib")
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig"))
        flags = subprocess.run(["pkg-config", "--static", "--libs-only-l", "--libs-only-other",
                                "hwrt"], env=env, check=True, capture_output=True,
                               text=True).stdout.split()
        ext.include_dirs.append(os.path.join(stage, "include"))
        ext.extra_objects.append(os.path.join(libdir, "libhwrt.a"))
        ext.libraries += [f[2:] for f in flags if f.startswith("-l") and f != "-lhwrt"]
        ext.extra_link_args += [f for f in flags if not f.startswith("-l")]
        # a SONAME like every shared object hwrt installs (the interpreter loads it by path)
        ext.extra_link_args.append("-Wl,-soname,hwrt" + os.path.basename(
            self.get_ext_filename(ext.name)).split("__init__", 1)[1])
        super().build_extension(ext)
        plugin = os.path.join(libdir, "libhwrt_mpi.so")
        if os.path.exists(plugin):
            shutil.copy2(plugin, os.path.dirname(self.get_ext_fullpath(ext.name)))

    def get_outputs(self):
        outs = super().get_outputs()
        for ext in self.extensions:
            plugin = os.path.join(os.path.dirname(self.get_ext_fullpath(ext.name)),
                                  "libhwrt_mpi.so")
            if os.path.exists(plugin):
                outs.append(plugin)
        return outs


sources = sorted(os.path.join("python", "src", f)
                 for f in os.listdir(os.path.join(ROOT, "python", "src")) if f.endswith(".c"))
os.makedirs(os.path.join(ROOT, "build-python"), exist_ok=True)
setup(
    version=version(),
    ext_modules=[Extension(
        "hwrt.__init__", sources=sources, include_dirs=[os.path.join("python", "src")],
        extra_compile_args=["-std=gnu11", "-fvisibility=hidden"],
        extra_link_args=["-Wl,--exclude-libs,ALL"])],
    cmdclass={"build_ext": CMakeBuildExt},
    # build trees beside CMake's build/ (also in .gitignore's /build-*/)
    options={"build": {"build_base": "build-python"},
             "egg_info": {"egg_base": "build-python"}},
)
