"""cpu_shared_library: a shared library of the CPU code alone, in any build.

A build with GPU code (no --config=cpu_only) compiles every library once;
the CUDA engine links all of it. The CPU engine, which must load where no
CUDA library is installed, links the same objects less those of the
targets that exist for the GPU: its CUDA kernels (cuda_library), their
adapters (the *_cuda libraries over //platform:cuda_context), that context,
and //platform:cuda_runtime's CUDA implementation, for which
`replacements` names the implementation without CUDA. So one compile
serves both engines, as it serves the tests (.bazelrc, --force_pic).

Which targets are GPU code: those that depend directly on the CUDA
toolkit (@local_cuda) or on //platform:cuda_context, which only CUDA
kernels use. The link proves the cut is clean: it passes
--no-undefined and none of the CUDA libraries, so an object left in that
calls CUDA, or one cut out that CPU code needs, fails the link. In a build
without GPU code nothing is cut and it is the plain shared library.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

_GpuTargetsInfo = provider(
    doc = "The labels (as strings) of the GPU-only targets among a target's dependencies.",
    fields = {"labels": "depset of strings"},
)

# A target that depends directly on one of these is GPU code.
_GPU_DEPENDENCIES = [
    "@local_cuda//:cuda_runtime",
    "@local_cuda//:cuda_libs",
    "//platform:cuda_context",
]

def _name(label):
    repository = "@" + label.workspace_name if label.workspace_name else ""
    return "%s//%s:%s" % (repository, label.package, label.name)

def _gpu_targets_aspect_impl(target, ctx):
    direct = []
    transitive = []
    gpu = target.label.workspace_name == "local_cuda"
    for dep in getattr(ctx.rule.attr, "deps", []):
        if type(dep) != "Target":
            continue
        if _name(dep.label) in _GPU_DEPENDENCIES:
            gpu = True
        if _GpuTargetsInfo in dep:
            transitive.append(dep[_GpuTargetsInfo].labels)
    if gpu:
        direct.append(_name(target.label))
    return [_GpuTargetsInfo(labels = depset(direct, transitive = transitive))]

_gpu_targets_aspect = aspect(
    implementation = _gpu_targets_aspect_impl,
    attr_aspects = ["deps"],
)

def _cpu_shared_library_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    gpu = {}
    for dep in ctx.attr.deps:
        for label in dep[_GpuTargetsInfo].labels.to_list():
            gpu[label] = True

    contexts = [dep[CcInfo].linking_context for dep in ctx.attr.deps]
    for replacement, replaced in ctx.attr.replacements.items():
        if _name(Label(replaced)) in gpu:
            contexts.append(replacement[CcInfo].linking_context)
    all_inputs = depset(
        order = "topological",
        transitive = [context.linker_inputs for context in contexts],
    )
    kept = [
        linker_input
        for linker_input in all_inputs.to_list()
        if _name(linker_input.owner) not in gpu
    ]

    linkopts = [
        ctx.expand_location(option, ctx.attr.additional_linker_inputs)
        for option in ctx.attr.linkopts
    ]
    linking_outputs = cc_common.link(
        actions = ctx.actions,
        name = ctx.label.name,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        linking_contexts = [cc_common.create_linking_context(
            linker_inputs = depset(kept, order = "topological"),
        )],
        user_link_flags = linkopts + ["-Wl,--no-undefined"],
        additional_inputs = ctx.files.additional_linker_inputs,
        output_type = "dynamic_library",
    )
    library = linking_outputs.library_to_link.dynamic_library
    output = ctx.outputs.out
    ctx.actions.run_shell(
        inputs = [library],
        outputs = [output],
        command = "cp \"$1\" \"$2\"",
        arguments = [library.path, output.path],
        mnemonic = "CopyCpuLibrary",
    )
    return [DefaultInfo(
        files = depset([output]),
        runfiles = ctx.runfiles(files = [output]),
    )]

cpu_shared_library = rule(
    implementation = _cpu_shared_library_impl,
    doc = "Links `deps` into the shared library `out`, without their GPU code.",
    attrs = {
        "deps": attr.label_list(
            aspects = [_gpu_targets_aspect],
            providers = [CcInfo],
        ),
        "out": attr.output(mandatory = True),
        "replacements": attr.label_keyed_string_dict(
            doc = "A CPU library -> the GPU target (a label) whose place it takes when that is cut out.",
            providers = [CcInfo],
        ),
        "linkopts": attr.string_list(),
        "additional_linker_inputs": attr.label_list(allow_files = True),
        "_cc_toolchain": attr.label(
            default = Label("@bazel_tools//tools/cpp:current_cc_toolchain"),
        ),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    incompatible_use_toolchain_transition = True,
)
