"""PyTorch's side of a bench/sweep.py case (its time and its result check) in a worker process of its own.

One PyTorch call can take minutes on some sweep shapes (fp16 upsample_linear1d backward on dY 23x53x22369x16: 73.7 s
on the H100) and a CUDA kernel cannot be interrupted in-process. So the worker announces each stretch of calls it is
about to wait for, the sweep waits at most its limit for each call (--torch-timeout) and, when one runs over, kills
the worker (which frees the GPU) and starts a fresh one for the next case.

The worker is spawned once (PyTorch imported and the device initialized once, outside the limit) and keeps its
place in the sweep's draws: a case is sent as its number, redrawn from the seed (bench/sweep_cases.py draws
deterministically), plus the .npy files the sweep saved for dmlgrad, its inputs and dmlgrad's dX.
"""
import multiprocessing
import os
import time
import types

import numpy as np

import gpu_bench as gb
import sweep_cases as sc

torch = gb.torch
START_S = 300  # importing PyTorch and initializing CUDA, before the first case: no PyTorch call of a case
LOAD_S = 120  # reading a case's inputs (up to 1 GiB each, just written, so in the page cache): no call either
# A PyTorch call slow on purpose, to see the limit at work (tests/bench/sweep_test.py): seconds each timed call sleeps
SLOW_CALL_S = float(os.environ.get("DMLGRAD_SWEEP_SLOW_TORCH_S") or 0)


class TimedOut(Exception):
    """A PyTorch call ran over the limit: the worker was stopped, in args[0] seconds (its GPU work torn down)."""


class Fault(Exception):
    """The worker's own code failed (not PyTorch): the case is an error, as any fault of the sweep's code."""


def random_tensor(shape, dtype, device):
    """A random tensor of a sweep dtype in the signed carrier PyTorch holds it in, made on the device: the sweep's
    inputs, and PyTorch's own where it needs other ones."""
    held = sc.carrier(dtype)
    if held.kind == "i" and held.itemsize == 8:  # torch.randint cannot take int64's whole range as its bounds
        return torch.randint(-(1 << 62), 1 << 62, shape, device=device, dtype=torch.int64)
    return gb.random_tensor(shape, held, device)


# The worker ------------------------------------------------------------------------------------------------------

def load(path, dtype, device):
    return torch.from_numpy(np.load(path).view(sc.carrier(dtype))).to(device)


class Draws:
    """The sweep's cases by number, drawn again from its seed and classes as bench/sweep_cases.py's schedule does."""

    def __init__(self, seed, classes, max_bytes, per_class):
        self.schedule = lambda: sc.schedule(seed, lambda cls, dtype: (cls, dtype) in classes, max_bytes, per_class)
        self.cases, self.next = self.schedule(), 0

    def case(self, number, args):
        """Case `number`, which must have dmlgrad arguments `args` (the sweep's own draw of it)."""
        if number < self.next:
            self.cases, self.next = self.schedule(), 0
        for _ in range(number - self.next):
            next(self.cases)
        (case, _), self.next = next(self.cases), number + 1
        if case.args != args:
            raise ValueError(f"the worker drew case {number} as {case.args}, the sweep as {args}")
        return case


def slowed(call):
    def slow_call():
        time.sleep(SLOW_CALL_S)
        return call()
    return slow_call


def measure(case, paths, repeat, device, announce):
    """PyTorch's median in ms and whether dmlgrad's dX matches PyTorch's result (None where PyTorch does not compute
    the same thing, or where one call was so slow that the CPU reference checks instead of another such call)."""
    inputs = lambda: {name: load(paths["{" + name + "}"], dtype, device) for name, (_, dtype) in case.inputs.items()}
    result = {"torch_ms": None, "one_call": False, "same": None, "torch_error": None}
    try:
        timed = ({name: random_tensor(shape, dtype, device) for name, (shape, dtype) in case.torch_inputs.items()}
                 if case.torch_inputs else inputs())
        call = lambda: gb.call_torch(case.torch_fn, timed, device)
        result["torch_ms"] = gb.device_median_ms(slowed(call) if SLOW_CALL_S else call, repeat, device, announce)
        result["one_call"] = result["torch_ms"] > gb.TIMED_BUDGET_S * 1e3
        if case.check is not None and not result["one_call"]:
            tensors = inputs() if case.torch_inputs else timed
            ours = load(paths["{dx}"], case.dtype, device)
            announce(1)
            theirs = gb.call_torch(case.torch_fn, tensors, device,
                                   in_float=case.check in (gb.close_half, gb.close_to_scale_half))
            result["same"] = bool(case.check(ours, theirs))
            if not result["same"]:
                gb.report_difference(types.SimpleNamespace(op=case.cls), ours, theirs)
    except RuntimeError as e:  # a PyTorch build without this op or too little memory: the case still counts
        result["torch_error"] = str(e).splitlines()[0][:300]
    return result


def serve(conn, draws, device):
    """The worker's loop: per request (number, dmlgrad arguments, paths, repeat), ("calls", (n, s)) before each
    stretch of n PyTorch calls plus those started in the next s seconds (the warm-up), then ("done", measure's
    result) or ("error", text) for a fault of the script."""
    # The CUDA context made, and the GPU's clock raised by the copies the sweep itself starts with: a fresh worker
    # after a timeout follows seconds of an idle GPU (the case's CPU check, this start), and on the H100 the first
    # two tiny cases after one took PyTorch 37-77% longer than in-process (docs/PERFORMANCE.md, sweep30).
    gb.copy_ceiling_gbps(gb.MIN_TIMED_CALLS, device)
    if device == "cuda":
        torch.cuda.empty_cache()
    conn.send(("ready", None))
    cases = Draws(*draws)
    while True:
        try:
            number, args, paths, repeat = conn.recv()
        except EOFError:  # the sweep ended
            return
        try:
            reply = ("done", measure(cases.case(number, args), paths, repeat, device,
                                     lambda calls, more_s=0.0: conn.send(("calls", (calls, more_s)))))
        except Exception as e:
            reply = ("error", f"{type(e).__name__}: {e}"[:400])
        if device == "cuda":
            torch.cuda.empty_cache()
        conn.send(reply)


# The sweep's side ------------------------------------------------------------------------------------------------

class Worker:
    """The sweep's handle on the worker, started now and again at the next case after one was stopped. draws:
    (seed, {(class, dtype)} of the run, largest tensor in bytes, cases per class or None), as the sweep drew its
    cases; timeout: the limit for each PyTorch call, in seconds."""

    def __init__(self, draws, device, timeout):
        self.draws, self.device, self.timeout = draws, device, timeout
        self.start()

    def start(self):
        context = multiprocessing.get_context("spawn")  # a forked child of a process using CUDA cannot use CUDA
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=serve, args=(theirs, self.draws, self.device), daemon=True)
        self.process.start()
        theirs.close()
        try:
            self.receive(START_S)
        except TimedOut:
            raise RuntimeError(f"PyTorch's worker process did not start in {START_S} s") from None

    def stop(self):
        if self.process is not None:
            self.process.kill()  # frees the GPU, even in the middle of a kernel
            self.process.join()
            self.conn.close()
            self.process = None

    def receive(self, seconds):
        """The worker's next message; TimedOut, the worker stopped, when none came within `seconds`."""
        try:
            if self.conn.poll(seconds):
                return self.conn.recv()
        except EOFError:  # it died: a crash in PyTorch
            self.process.join()
            code = self.process.exitcode
            self.stop()
            raise RuntimeError(f"PyTorch's worker process died (exit code {code})") from None
        begin = time.perf_counter()
        self.stop()
        raise TimedOut(time.perf_counter() - begin)

    def measure(self, number, case, paths, repeat):
        """Case `number` of the sweep's draws (case: the sweep's own draw of it), with its inputs and dmlgrad's dX in
        `paths` ("{x}" -> .npy path): measure's result. TimedOut when a call ran over the limit."""
        if self.process is None:
            self.start()
        self.conn.send((number, case.args, paths, repeat))
        seconds = LOAD_S
        while True:
            kind, value = self.receive(seconds)
            if kind == "done":
                return value
            if kind != "calls":
                raise Fault(f"the PyTorch worker failed: {value}")
            calls, more_s = value
            seconds = calls * self.timeout + more_s
