"""Detects a CUDA toolkit at build time.

Looks for `bin/nvcc` under $CUDA_PATH (default /usr/local/cuda). The generated
repository always exists: `defs.bzl` says whether CUDA was found (HAS_CUDA) and
`:cuda_runtime` links the static CUDA runtime when it was.
"""

def _cuda_configure_impl(repository_ctx):
    cuda_path = repository_ctx.os.environ.get("CUDA_PATH", "/usr/local/cuda")
    nvcc = repository_ctx.path(cuda_path + "/bin/nvcc")
    has_cuda = nvcc.exists
    if has_cuda:
        repository_ctx.symlink(cuda_path + "/include", "include")
        repository_ctx.symlink(cuda_path + "/bin", "bin")
        lib_dir = cuda_path + "/lib64"
        build = """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "cuda_runtime",
    hdrs = glob(["include/**"]),
    includes = ["include"],
    linkopts = [
        "-L{lib}",
        "-lcudart_static",
        "-ldl",
        "-lrt",
        "-lpthread",
    ],
)

# cuBLAS and cuDNN, linked as shared libraries (their static forms are
# hundreds of megabytes). The run path finds them where they were found at
# build time; elsewhere LD_LIBRARY_PATH must name them.
cc_library(
    name = "cuda_libs",
    linkopts = [
        "-L{lib}",
        "-Wl,-rpath,{lib}",
        "-lcublas",
        "-lcublasLt",
        "-lcudnn",
    ],
    deps = [":cuda_runtime"],
)

filegroup(
    name = "nvcc",
    srcs = ["bin/nvcc"],
)
""".format(lib = lib_dir)
    else:
        build = """
package(default_visibility = ["//visibility:public"])

cc_library(name = "cuda_runtime")

cc_library(name = "cuda_libs")
"""
    repository_ctx.file("BUILD", build)
    repository_ctx.file("WORKSPACE", "workspace(name = \"local_cuda\")\n")
    repository_ctx.file(
        "defs.bzl",
        "HAS_CUDA = {}\nCUDA_PATH = \"{}\"\n".format(has_cuda, cuda_path if has_cuda else ""),
    )

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_PATH"],
    local = True,
)
