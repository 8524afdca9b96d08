"""A fuzz target's Bazel tests: its inputs replayed, and a bounded fuzzing run."""

def fuzz_target(name, deps, corpus, crashes = None, mutate_seconds = 30):
    """Tests of the libFuzzer target `name`_fuzzer.cc.

    `name`_fuzzer_replay_test runs every input of `corpus` and `crashes`
    once (default tests, every configuration). `name`_fuzzer_mutation_test
    (manual: tools/test.sh runs it under --config=asan) replays them and
    then fuzzes by blind mutation of them for `mutate_seconds`; it is never
    cached, so each run tries new inputs.
    """
    folders = [corpus] + ([crashes] if crashes else [])
    args = ["tools/fuzz/" + folder for folder in folders]
    data = native.glob([folder + "/**" for folder in folders])
    native.cc_library(
        name = name + "_fuzzer_lib",
        testonly = True,
        srcs = [name + "_fuzzer.cc"],
        deps = deps,
        alwayslink = True,
    )
    native.cc_test(
        name = name + "_fuzzer_replay_test",
        size = "small",
        args = args,
        data = data,
        deps = [name + "_fuzzer_lib", ":replay_main"],
    )
    native.cc_test(
        name = name + "_fuzzer_mutation_test",
        size = "medium",
        args = ["--mutate_seconds=%d" % mutate_seconds] + args,
        data = data,
        tags = ["manual", "external"],
        deps = [name + "_fuzzer_lib", ":replay_main"],
    )
