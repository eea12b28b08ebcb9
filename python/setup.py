"""Builds the tosac Python package: the C extension tosac._tosac linked statically against the
library built from this repository by CMake (the installed-library form libtosac.a, whose only
global names are the public tosac_ API), so the installed package needs no LD_LIBRARY_PATH.

    python3 -m venv --system-site-packages venv && venv/bin/pip install --no-build-isolation ./python
    python3 python/setup.py build_ext --inplace        # for working on the package

Offline: needs Debian's python3-dev, python3-setuptools, python3-numpy, cmake and the library's
own build dependencies (scripts/install-deps.sh). TOSAC_STATIC_LIB=/path/libtosac.a uses a library
that is already built (the CTest python.pytest does) instead of building one.
"""

import os
import re
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.environ.get("TOSAC_SOURCE_DIR") or os.path.dirname(HERE))
os.chdir(HERE)  # setuptools takes source paths relative to the working directory


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(tosac VERSION ([0-9.]+)", f.read()).group(1)


class CMakeBuildExt(build_ext):
    """Builds libtosac.a with CMake (Release, no tests) before compiling the extension."""

    def run(self):
        lib = os.environ.get("TOSAC_STATIC_LIB")
        if not lib:
            build = os.path.join(os.path.abspath(self.build_temp), "tosac-cmake")
            gen = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build, *gen, "-DCMAKE_BUILD_TYPE=Release",
                                   "-DBUILD_TESTING=OFF", "-DTOSAC_WERROR=OFF"])
            jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
            subprocess.check_call(["cmake", "--build", build, "--target", "tosac_lib_static", "-j", jobs])
            lib = os.path.join(build, "libtosac.a")
        if not os.path.isfile(lib):
            raise RuntimeError(f"{lib}: the tosac library was not built")
        for ext in self.extensions:
            ext.extra_objects = [lib]
            ext.depends = [lib]
        super().run()


setup(
    name="tosac",
    version=version(),
    description="ONNX/PyTorch to TOSA 1.0 compiler, quantizer, validator and runtime",
    license="MIT",
    packages=["tosac"],
    python_requires=">=3.9",
    install_requires=["numpy"],
    ext_modules=[
        Extension(
            "tosac._tosac",
            sources=["tosac/_tosac.c"],
            include_dirs=[os.path.join(ROOT, "include")],
            libraries=["protobuf-c", "m"],
            extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers"],
            # the library's names stay inside the extension: only PyInit__tosac is exported
            extra_link_args=["-Wl,--exclude-libs,ALL"],
        )
    ],
    cmdclass={"build_ext": CMakeBuildExt},
)
