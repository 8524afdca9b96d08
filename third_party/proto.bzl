"""Compiles .proto files with the system protoc (protobuf 3.21 from Debian)."""

def cc_proto(name, srcs, deps = [], visibility = None):
    """A cc_library holding the C++ classes generated from `srcs`.

    Args:
      name: name of the library.
      srcs: .proto files of this package.
      deps: other cc_proto libraries whose .proto files `srcs` import.
      visibility: visibility of the library.
    """
    pkg = native.package_name()
    stems = [src[:-len(".proto")] for src in srcs]
    outs = [s + ".pb.h" for s in stems] + [s + ".pb.cc" for s in stems]
    native.genrule(
        name = name + "_protoc",
        srcs = srcs + [d + "_srcs" for d in deps],
        outs = outs,
        cmd = "protoc --proto_path=. --cpp_out=$(GENDIR) " +
              " ".join(["%s/%s" % (pkg, s) for s in srcs]),
    )
    native.filegroup(name = name + "_srcs", srcs = srcs, visibility = visibility)
    native.cc_library(
        name = name,
        srcs = [s + ".pb.cc" for s in stems],
        hdrs = [s + ".pb.h" for s in stems],
        deps = deps + ["//third_party:protobuf"],
        visibility = visibility,
    )

def cc_grpc_proto(name, srcs, deps = [], visibility = None):
    """A cc_library of the messages and gRPC services of `srcs`.

    protoc's gRPC plugin is Debian's (protobuf-compiler-grpc); the library
    links Debian's gRPC (libgrpc++-dev), whose headers are in /usr/include.

    Args:
      name: name of the library.
      srcs: .proto files of this package.
      deps: cc_proto or cc_grpc_proto libraries whose .proto files `srcs`
        import.
      visibility: visibility of the library.
    """
    pkg = native.package_name()
    stems = [src[:-len(".proto")] for src in srcs]
    hdrs = [s + ".pb.h" for s in stems] + [s + ".grpc.pb.h" for s in stems]
    cc_srcs = [s + ".pb.cc" for s in stems] + [s + ".grpc.pb.cc" for s in stems]
    native.genrule(
        name = name + "_protoc",
        srcs = srcs + [d + "_srcs" for d in deps],
        outs = hdrs + cc_srcs,
        cmd = "protoc --proto_path=. --cpp_out=$(GENDIR) " +
              "--grpc_out=$(GENDIR) " +
              "--plugin=protoc-gen-grpc=$$(command -v grpc_cpp_plugin) " +
              " ".join(["%s/%s" % (pkg, s) for s in srcs]),
    )
    native.filegroup(name = name + "_srcs", srcs = srcs, visibility = visibility)
    native.cc_library(
        name = name,
        srcs = cc_srcs,
        hdrs = hdrs,
        deps = deps + ["//third_party:grpc", "//third_party:protobuf"],
        visibility = visibility,
    )
