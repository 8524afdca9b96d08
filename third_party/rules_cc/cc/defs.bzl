"""Forwards rules_cc's macros to Bazel's native rules.

Debian's bazel-rules-cc is newer than Bazel 4.2.3 understands, and Bazel's
own tools load rules_cc, so this shim stands in for it.
"""

cc_library = native.cc_library
cc_binary = native.cc_binary
cc_test = native.cc_test
cc_import = native.cc_import
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
objc_library = native.objc_library
