"""Build rules for CUDA code with Bazel 4, which has no CUDA support.

`cuda_library` compiles .cu files with nvcc (one genrule per file) into a
cc_library. Kernel files include only plain C++ and CUDA headers: the
operator code that adapts them to scopeflow's kernel interface is ordinary
C++ compiled by the C++ toolchain.

Every .cu file may include platform/cuda_launch.h (launch shapes) besides
its own library's `hdrs`.

`if_cuda(a, b)` selects `a` in builds with GPU code (a CUDA toolkit found,
no --config=cpu_only) and `b` otherwise.
"""

load("@local_cuda//:defs.bzl", "CUDA_PATH", "HAS_CUDA")

# Code for Ampere (sm_80) and Hopper (sm_90), and PTX of sm_90 that newer
# devices compile when they load it.
_NVCC_FLAGS = " ".join([
    "-O3",
    "-std=c++17",
    "-Xcompiler -fPIC",
    "-Xcompiler -Wall",
    "--expt-relaxed-constexpr",
    "-gencode arch=compute_80,code=sm_80",
    "-gencode arch=compute_90,code=sm_90",
    "-gencode arch=compute_90,code=compute_90",
    "-I.",
])

def if_cuda(if_true, if_false = []):
    if not HAS_CUDA:
        return if_false
    return select({
        "//:cpu_only": if_false,
        "//conditions:default": if_true,
    })

def cuda_library(name, srcs, hdrs = [], deps = [], **kwargs):
    """Compiles `srcs` (.cu) with nvcc; empty in builds without GPU code."""
    objects = []
    for src in srcs:
        stem = src.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        out = "_cuda_objs/%s/%s.pic.o" % (name, stem)
        native.genrule(
            name = "%s_%s_nvcc" % (name, stem),
            srcs = [src] + hdrs + ["//platform:cuda_launch.h"],
            outs = [out],
            # Without GPU code the object is never linked: skip nvcc.
            cmd = if_cuda(
                "%s/bin/nvcc %s -c $(location %s) -o $@" % (CUDA_PATH, _NVCC_FLAGS, src),
                "touch $@",
            ) if HAS_CUDA else "touch $@",
            message = "nvcc %s" % src,
        )
        objects.append(out)
    native.cc_library(
        name = name,
        srcs = if_cuda(objects),
        hdrs = if_cuda(hdrs),
        deps = if_cuda(deps + ["@local_cuda//:cuda_runtime"]),
        **kwargs
    )
