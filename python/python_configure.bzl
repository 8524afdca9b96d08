"""Finds the Python the scopeflow module is built for, and pybind11.

The interpreter is $SCOPEFLOW_PYTHON if set, else Debian's /usr/bin/python3
(which has the numpy, torch and onnx packages tools/setup.sh installs),
else the first python3 on PATH. The interpreter itself says where its
headers and pybind11's are (sysconfig, pybind11.get_include()), as
python3-config would, so the same rule works on any machine with the
python3-dev and python3-pybind11 packages.

The repository provides `:headers` (Python's and pybind11's headers, for an
extension module; nothing to link, as an extension takes libpython's symbols
from the interpreter that loads it) and `defs.bzl` with PYTHON_BIN, the
interpreter the tests run the module under.
"""

_QUERY = """
import sysconfig
print(sysconfig.get_paths()["include"])
try:
    import pybind11
    print(pybind11.get_include())
except ImportError:
    print("")
"""

def _python_configure_impl(repository_ctx):
    python = repository_ctx.os.environ.get("SCOPEFLOW_PYTHON", "")
    if not python:
        if repository_ctx.path("/usr/bin/python3").exists:
            python = "/usr/bin/python3"
        else:
            found = repository_ctx.which("python3")
            python = str(found) if found else ""
    if not python:
        fail("no python3 found: run tools/setup.sh (or set SCOPEFLOW_PYTHON)")
    result = repository_ctx.execute([python, "-c", _QUERY])
    if result.return_code != 0:
        fail("%s could not report its include directories: %s" %
             (python, result.stderr))
    lines = result.stdout.strip().split("\n")
    python_include = lines[0].strip()
    pybind11_include = lines[1].strip() if len(lines) > 1 else ""
    if not repository_ctx.path(python_include + "/Python.h").exists:
        fail("%s has no Python.h: install python3-dev (tools/setup.sh)" %
             python_include)
    if not pybind11_include:
        fail("%s cannot import pybind11: install python3-pybind11 " % python +
             "(tools/setup.sh)")

    # Bazel wants headers inside a repository: the directories come in as
    # symbolic links (pybind11's as its own subdirectory only, since its
    # include directory may be /usr/include itself).
    repository_ctx.symlink(python_include, "python_include")
    repository_ctx.symlink(pybind11_include + "/pybind11",
                           "pybind11_include/pybind11")
    repository_ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "headers",
    hdrs = glob([
        "python_include/**/*.h",
        "pybind11_include/**/*.h",
    ]),
    includes = ["python_include", "pybind11_include"],
)
""")
    repository_ctx.file("defs.bzl", "PYTHON_BIN = %s\n" % repr(python))

python_configure = repository_rule(
    implementation = _python_configure_impl,
    environ = ["PATH", "SCOPEFLOW_PYTHON"],
    local = True,
)
