"""Finds the system's MPI (Debian's Open MPI) at build time through pkg-config.

The generated repository always exists: `:mpi` is empty when pkg-config knows
no `ompi-c` (or `mpi`) package, and otherwise carries MPI's headers, its link
flags and the define SCOPEFLOW_HAVE_MPI, which framework/parallel's
mpi_communicator.cc compiles its MPI code under. `defs.bzl` says which
(HAS_MPI), so that tests needing mpirun are only declared where it exists.
"""

def _pkg_config(repository_ctx, package, flag):
    result = repository_ctx.execute(["pkg-config", flag, package])
    if result.return_code != 0:
        return None
    return [word for word in result.stdout.strip().split(" ") if word]

def _mpi_configure_impl(repository_ctx):
    package = None
    for candidate in ["ompi-c", "mpi"]:
        if _pkg_config(repository_ctx, candidate, "--exists") != None:
            package = candidate
            break
    mpirun = repository_ctx.which("mpirun")
    if package == None or mpirun == None:
        repository_ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

cc_library(name = "mpi")
""")
        repository_ctx.file("defs.bzl", "HAS_MPI = False\n")
        return

    # Headers come in as symlinked directories (Bazel wants them inside a
    # repository); link flags pass through as they are.
    include_dirs = []
    for flag in _pkg_config(repository_ctx, package, "--cflags-only-I"):
        include_dirs.append(flag[2:])
    includes = []
    for i, directory in enumerate(include_dirs):
        name = "include%d" % i
        repository_ctx.symlink(directory, name)
        includes.append(name)
    libs = _pkg_config(repository_ctx, package, "--libs")
    lib_dirs = [flag[2:] for flag in libs if flag.startswith("-L")]
    rpaths = ["-Wl,-rpath," + d for d in lib_dirs]
    repository_ctx.symlink(mpirun, "mpirun")
    repository_ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "mpi",
    hdrs = glob([{globs}]),
    includes = {includes},
    defines = ["SCOPEFLOW_HAVE_MPI"],
    linkopts = {linkopts},
)

exports_files(["mpirun"])
""".format(
        globs = ", ".join(['"%s/**/*.h"' % i for i in includes]),
        includes = repr(includes),
        linkopts = repr(libs + rpaths),
    ))
    repository_ctx.file("defs.bzl", "HAS_MPI = True\n")

mpi_configure = repository_rule(
    implementation = _mpi_configure_impl,
    environ = ["PATH", "PKG_CONFIG_PATH"],
    local = True,
)
