#!/usr/bin/env python3
"""Soak test of `scopeflow serve` (manual; not in the default tests).

Serves the MLP of examples/mlp and, for --duration seconds, drives it with
--connections keep-alive clients that mix good predict requests (which must
all answer 200) with bad ones (malformed JSON, wrong shapes, unknown paths,
wrong methods, bodies over the limit, chunked bodies over the limit: each must
get its 4xx), beside --slowloris clients that send a header byte every few
seconds and idle connections. Halfway it moves a second version into place.
Every 5 s it samples the server's resident memory and times GET /healthz.
Fails (exit 1) on any error of a good request, a health probe over 50 ms at
the median, or resident memory that grows by more than 10% from the first
sample after warm-up to the last.

  bazel build -c opt //tools:scopeflow
  tools/serve_soak.py --scopeflow bazel-bin/tools/scopeflow --duration 180
"""
import argparse
import http.client
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROW = ",".join(["0.5"] * 64)
GOOD = '{"inputs": {"image": [[%s]]}}' % ROW
BAD = [
    ("POST", "/v1/models/mlp:predict", '{"inputs": {"image": [[1, 2', 400),
    ("POST", "/v1/models/mlp:predict", '{"inputs": {"image": [[1, 2, 3]]}}', 400),
    ("POST", "/v1/models/mlp:predict", '{"inputs": {"x": [[1]]}}', 400),
    ("POST", "/v1/models/nope:predict", GOOD, 404),
    ("GET", "/v1/models/mlp:predict", None, 405),
    ("GET", "/nowhere", None, 404),
    ("POST", "/v1/models/mlp:predict", " " * 200_000, 413),
]


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.good = 0
        self.good_errors = []
        self.bad = 0
        self.bad_wrong = []

    def add(self, field, value):
        with self.lock:
            if isinstance(getattr(self, field), list):
                getattr(self, field).append(value)
            else:
                setattr(self, field, getattr(self, field) + value)


def client(port, stop, stats, seed):
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    while not stop.is_set():
        good = rng.random() < 0.7
        try:
            if good:
                conn.request("POST", "/v1/models/mlp:predict", GOOD,
                             {"Content-Type": "application/json"})
                reply = conn.getresponse()
                body = reply.read()
                # TF Serving's columnar reply: a bare "outputs" tensor for
                # the MLP's single output.
                if reply.status == 200 and body.startswith(b'{"outputs":[['):
                    stats.add("good", 1)
                else:
                    stats.add("good_errors", (reply.status, body[:200]))
                if reply.getheader("Connection") == "close":
                    conn.close()
                continue
            method, path, body, status = rng.choice(BAD)
            conn.request(method, path, body,
                         {"Content-Type": "application/json"})
            reply = conn.getresponse()
            reply.read()
            if reply.status == status:
                stats.add("bad", 1)
            else:
                stats.add("bad_wrong", (method, path, reply.status, status))
            if reply.getheader("Connection") == "close":
                conn.close()
        except (OSError, http.client.HTTPException) as error:
            if good:
                stats.add("good_errors", repr(error))
            else:
                stats.add("bad_wrong", repr(error))
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)


def chunked_over_limit(port, stop, stats):
    while not stop.is_set():
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(b"POST /v1/models/mlp:predict HTTP/1.1\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n")
            try:
                for _ in range(40):
                    sock.sendall(b"2710\r\n" + b" " * 10000 + b"\r\n")
            except OSError:
                pass
            reply = sock.recv(200)
            if reply.startswith(b"HTTP/1.1 413"):
                stats.add("bad", 1)
            else:
                stats.add("bad_wrong", ("chunked", reply[:60]))
        time.sleep(0.5)


def slowloris(port, stop):
    sock = socket.create_connection(("127.0.0.1", port))
    request = b"GET /healthz HTTP/1.1\r\nHost: soak\r\nX-Slow: "
    i = 0
    while not stop.is_set():
        try:
            sock.sendall(request[i:i + 1] if i < len(request) else b"a")
            i += 1
        except OSError:  # the server's request deadline: start again
            sock.close()
            sock = socket.create_connection(("127.0.0.1", port))
            i = 0
        stop.wait(2)
    sock.close()


PROBE = """
import http.client, sys, time
start = time.monotonic()
conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
conn.request("GET", "/healthz")
assert conn.getresponse().read()
print((time.monotonic() - start) * 1e3)
"""


def health_ms(port):
    # Timed in a process of its own: this one's clients hold its GIL.
    out = subprocess.run([sys.executable, "-c", PROBE, str(port)],
                         capture_output=True, text=True, check=True)
    return float(out.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scopeflow", default="bazel-bin/tools/scopeflow")
    parser.add_argument("--duration", type=float, default=180)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--slowloris", type=int, default=16)
    parser.add_argument("--idle", type=int, default=64)
    parser.add_argument("--server_args", default="--threads=2")
    # A short run in the default tests (serve_soak_short_test.sh) samples
    # often and judges memory only against gross growth: a few seconds
    # include the warm-up that the long run leaves out.
    parser.add_argument("--sample_seconds", type=float, default=5)
    parser.add_argument("--warmup_seconds", type=float, default=30)
    parser.add_argument("--max_rss_growth", type=float, default=0.10)
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="serve_soak_")
    models = os.path.join(root, "mlp")
    os.makedirs(os.path.join(models, "1"))
    shutil.copy("examples/mlp/main.pbtxt", os.path.join(models, "1", "model.pbtxt"))
    subprocess.run([args.scopeflow, "run", "examples/mlp/main.pbtxt",
                    "--startup=examples/mlp/startup.pbtxt",
                    "--feed=image=examples/mlp/digit.npy",
                    "--save_params=" + os.path.join(models, "1", "params")],
                   check=True, stdout=subprocess.DEVNULL)
    server = subprocess.Popen(
        [args.scopeflow, "serve", models, "--port=0", "--poll_seconds=0.5",
         "--max_body_bytes=100000"] + args.server_args.split(),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # Lines the server prints before its start line (warnings) are shown.
    line = server.stdout.readline()
    while line and "http://127.0.0.1:" not in line:
        print(line.rstrip())
        line = server.stdout.readline()
    if not line:
        print("FAIL: the server exited before serving")
        return 1
    port = int(line.split("http://127.0.0.1:")[1].split()[0].split("/")[0])
    print(line.strip())
    threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()

    stop = threading.Event()
    stats = Stats()
    threads = [threading.Thread(target=client, args=(port, stop, stats, i))
               for i in range(args.connections)]
    threads.append(threading.Thread(target=chunked_over_limit, args=(port, stop, stats)))
    threads += [threading.Thread(target=slowloris, args=(port, stop))
                for _ in range(args.slowloris)]
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(args.idle)]
    for thread in threads:
        thread.start()

    samples = []
    start = time.monotonic()
    swapped = False
    while time.monotonic() - start < args.duration:
        time.sleep(args.sample_seconds)
        elapsed = time.monotonic() - start
        samples.append((elapsed, rss_kib(server.pid), health_ms(port), stats.good))
        print("%6.0f s  rss %7d KiB  healthz %6.1f ms  good %8d  bad %7d  "
              "good errors %d  wrong bad %d" % (
                  elapsed, samples[-1][1], samples[-1][2], stats.good, stats.bad,
                  len(stats.good_errors), len(stats.bad_wrong)), flush=True)
        if not swapped and elapsed > args.duration / 2:
            staging = os.path.join(root, "staging")
            shutil.copytree(os.path.join(models, "1"), staging)
            os.rename(staging, os.path.join(models, "2"))
            swapped = True
            print("moved version 2 into place", flush=True)
    stop.set()
    for thread in threads:
        thread.join()
    for sock in idle:
        sock.close()
    server.terminate()
    server.wait(timeout=30)
    shutil.rmtree(root)

    warm = [s for s in samples if s[0] >= args.warmup_seconds] or samples
    growth = (warm[-1][1] - warm[0][1]) / warm[0][1]
    median_health = statistics.median(s[2] for s in samples)
    print("good %d (errors %d), bad %d (wrong status %d), rss %+.1f%% after "
          "warm-up, healthz median %.1f ms, max %.1f ms, exit status %d" % (
              stats.good, len(stats.good_errors), stats.bad, len(stats.bad_wrong),
              growth * 100, median_health, max(s[2] for s in samples),
              server.returncode))
    for error in stats.good_errors[:5]:
        print("good request failed:", error)
    for wrong in stats.bad_wrong[:5]:
        print("bad request answered wrongly:", wrong)
    ok = (not stats.good_errors and not stats.bad_wrong and
          growth < args.max_rss_growth and stats.good > 0 and
          median_health < 50 and server.returncode == 0)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
