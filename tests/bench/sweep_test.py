#!/usr/bin/python3
"""bench/sweep.py's PyTorch worker: on tiny shapes with PyTorch on the CPU, a normal run times and checks every case
with PyTorch, and a run whose PyTorch calls are slow on purpose (DMLGRAD_SWEEP_SLOW_TORCH_S, past --torch-timeout)
stops the worker on each case, starts a fresh one for the next, and checks the results against the CPU reference.
Usage: sweep_test.py DMLGRAD SOURCE_DIR. Exits 77 (skipped) without numpy and PyTorch.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

CASES = 2  # relu float32 and float16 (the run order's first two): PyTorch computes the same thing on both


def sweep(dmlgrad, source, d, name, extra=(), env=None):
    """The run's exit status, output and JSON."""
    out = os.path.join(d, name + ".json")
    command = [sys.executable, os.path.join(source, "bench", "sweep.py"), "--dmlgrad", dmlgrad, "--smoke", "--device",
               "cpu", "--seed", "1", "--total", str(CASES), "--repeat", "3", "--scratch", d, "--json-out", out, *extra]
    proc = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **(env or {})})
    print(proc.stdout + proc.stderr)
    with open(out) as f:
        return proc.returncode, proc.stdout, json.load(f)


def expect(ok, what):
    if not ok:
        sys.exit(f"FAILED: {what}")


def main():
    dmlgrad, source = sys.argv[1:3]
    if not all(importlib.util.find_spec(module) for module in ("numpy", "torch")):
        print("skipped: no numpy or PyTorch for", sys.executable)
        sys.exit(77)
    with tempfile.TemporaryDirectory() as d:
        code, text, run = sweep(dmlgrad, source, d, "normal")
        rows = run["rows"]
        expect(code == 0 and len(rows) == CASES, "the normal run exits 0 with every case")
        expect(all(r["torch_us"] and r["checked_against"] == "PyTorch" and r["same_result"] and
                   "torch_timeout_s" not in r for r in rows), "the normal run times and checks every case with PyTorch")
        expect(run["summary"]["with_pytorch"] == CASES and run["summary"]["torch_timed_out"] == 0 and
               "timed out" not in text, "the normal run's summary has no timeout")

        code, text, run = sweep(dmlgrad, source, d, "slow", ["--torch-timeout", "0.5"],
                                {"DMLGRAD_SWEEP_SLOW_TORCH_S": "60"})
        rows = run["rows"]
        expect(code == 0 and len(rows) == CASES, "the slow run exits 0 with every case")
        expect(all(r.get("torch_timeout_s") == 0.5 and r["torch_us"] is None and r["checked_against"] == "CPU reference"
                   and r["same_result"] for r in rows), "each slow case timed out and the CPU reference checked it")
        expect(text.count("PyTorch reference timed out after 0.5 s") == CASES, "one line a timeout")
        expect(run["summary"]["cases"] == CASES and run["summary"]["with_pytorch"] == 0 and
               run["summary"]["torch_timed_out"] == CASES, "the summary counts the cases, without PyTorch times")
        expect("timed out (0.5 s)" in text and f"{CASES} of the others timed out in PyTorch" in text,
               "the table and the summary say so")


if __name__ == "__main__":
    main()
