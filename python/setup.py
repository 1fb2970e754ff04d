"""Builds the urlsieve Python package: `pip install --no-build-isolation <checkout>/python`.

The extension urlsieve._core is not compiled by setuptools: build_ext configures CMake on the
checkout (this directory's parent) in Release, for the interpreter running this build
(sys.executable: the venv's), with only what the module needs (-DURLSIEVE_BUILD_CRAWLER=OFF: the
dedup library and the module, no tests, benchmarks, crawler or tools), builds the module's target
and copies the .so into the package. The .py files come from python/urlsieve/. See
docs/embedding.md, "The Python package".

The CMake tree lives in setuptools' build_temp (python/build/ by default, ignored by git); building
again reuses it. ccache is used when it is on PATH; the build runs os.cpu_count() jobs unless
CMAKE_BUILD_PARALLEL_LEVEL says otherwise.
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

PYTHON_DIR = Path(__file__).resolve().parent
SOURCE_DIR = PYTHON_DIR.parent
MODULE_TARGET = "urlsieve_python"  # python/CMakeLists.txt


def project_version():
    """The version in the root CMakeLists.txt's project(): the one version of everything."""
    cmake_lists = SOURCE_DIR / "CMakeLists.txt"
    match = re.search(r"project\(\s*urlsieve\s+VERSION\s+([0-9][0-9.]*)", cmake_lists.read_text())
    if not match:
        raise RuntimeError(f"{cmake_lists}: no `project(urlsieve VERSION x.y.z ...)`")
    return match.group(1)


class CMakeExtension(Extension):
    """An extension CMake builds: no sources for setuptools to compile."""

    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures and builds the module with CMake, then copies it where setuptools expects it."""

    def build_extension(self, ext):
        if shutil.which("cmake") is None:
            raise RuntimeError("building urlsieve needs cmake (Debian: apt-get install cmake)")
        build_dir = Path(self.build_temp).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)
        configure = [
            "cmake", "-S", str(SOURCE_DIR), "-B", str(build_dir),
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DURLSIEVE_BUILD_CRAWLER=OFF",
            "-DURLSIEVE_BUILD_PYTHON=ON",
        ]
        if not (build_dir / "CMakeCache.txt").exists() and shutil.which("ninja"):
            configure += ["-G", "Ninja"]  # the generator of an existing tree cannot change
        if shutil.which("ccache") and "CMAKE_CXX_COMPILER_LAUNCHER" not in os.environ:
            configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        self._run(configure)
        if not (build_dir / "python" / "CMakeFiles" / f"{MODULE_TARGET}.dir").is_dir():
            raise RuntimeError("CMake skipped the Python module (see 'urlsieve: Python module "
                               "skipped' above): install python3-dev and pybind11-dev")
        build = ["cmake", "--build", str(build_dir), "--target", MODULE_TARGET]
        if "CMAKE_BUILD_PARALLEL_LEVEL" not in os.environ:
            build += ["--parallel", str(os.cpu_count() or 1)]
        self._run(build)

        # python/CMakeLists.txt puts the module in <build>/python/urlsieve/, named for the
        # interpreter's ABI (_core.cpython-311-x86_64-linux-gnu.so): the name setuptools expects.
        target = Path(self.get_ext_fullpath(ext.name))
        built = build_dir / "python" / "urlsieve" / target.name
        if not built.is_file():
            found = sorted(p.name for p in built.parent.glob("_core*"))
            raise RuntimeError(f"CMake built {found} in {built.parent}, not {target.name} "
                               f"(the module of {sys.executable})")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)

    def _run(self, command):
        print("urlsieve:", " ".join(command), flush=True)
        subprocess.run(command, check=True)


def require_wheel():
    """setuptools 66 makes wheels (and their metadata) with the `wheel` package, which ensurepip
    does not put in a venv: say so instead of "invalid command 'bdist_wheel'"."""
    if importlib.util.find_spec("wheel") is None and {"bdist_wheel", "dist_info"} & set(sys.argv):
        sys.exit(f"urlsieve: {sys.executable} has no `wheel` package, which setuptools needs to "
                 "build the package: make the venv with --system-site-packages (Debian's "
                 "python3-wheel) or install wheel into it")


require_wheel()
setup(
    version=project_version(),
    packages=["urlsieve"],
    ext_modules=[CMakeExtension("urlsieve._core")],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
