"""The host's parallel ceilings for a batch of heavy jobs (issue 24 item 1), measured on the machine it runs on.

What each job of `dmlgrad batch` moves, and the probe that bounds it:
- its inputs: mapped from the page cache and copied into pinned staging memory -> `copy` (memcpy from a
  MAP_POPULATE mapping of the input files into pinned buffers); plain `read` (pread from the page cache into a
  buffer) is measured beside it;
- its output: copied from staging into a new file's shared mapping, whose pages fault in on first write ->
  `write-mapped` (fallocate, mmap, threads filling disjoint parts of one new file); beside it, the other ways of
  writing it: `write` (pwrite into one new file per thread, from one CHUNK reused), `write-anon` (the same from a
  buffer of each thread's whole share, touched first: outputs written from ordinary memory by several threads)
  and `write-one` (pwrite by every thread into ONE new file at disjoint offsets: whether one file's writes scale);
- PCIe: host-to-device and device-to-host per GPU, and on all GPUs at once (PyTorch CUDA copies from and to
  pinned memory);
- all of it at once -> `mix` (probe_mix: the copies into staging and the transfers both ways at the same time, in
  the batch's proportion of output to input bytes, on one GPU and on all): the copies and the DMA share the host's
  memory, so the batch can go no faster than this, whatever the single probes say.
The host probes run with 1, 2, 4, ... threads up to the CPU affinity count (and that count itself). Python's
threads do the work in os.preadv, os.pwrite and numpy copies, which release the GIL, in chunks of CHUNK bytes.
Without PyTorch or CUDA the staging is ordinary memory (said so in the output) and the PCIe probes are skipped.
"""
import contextlib
import mmap
import os
import statistics
import threading
import time

import numpy as np

try:
    import torch
except ImportError:
    torch = None

CHUNK = 16 << 20  # small enough that 32 threads share a few GiB evenly


def thread_counts(limit=None):
    """1, 2, 4, ... up to the CPU affinity count, and that count itself (or limit, if smaller)."""
    most = len(os.sched_getaffinity(0))
    most = min(most, limit) if limit else most
    counts = [1 << i for i in range(most.bit_length()) if 1 << i <= most]
    return counts + ([most] if most not in counts else [])


def in_threads(threads, work):
    """work(t) on threads t = 0..threads-1 at once; the wall seconds from the first start to the last end."""
    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    start = time.perf_counter()
    for p in pool:
        p.start()
    for p in pool:
        p.join()
    return time.perf_counter() - start


def chunks(sizes, chunk=CHUNK):
    """(file index, offset, length) pieces of at most chunk bytes covering every file."""
    return [(i, off, min(chunk, size - off)) for i, size in enumerate(sizes) for off in range(0, size, chunk)]


def probe_read(paths, threads):
    """pread of every file (in the page cache) into one buffer per thread: GB/s."""
    sizes = [os.path.getsize(p) for p in paths]
    fds = [os.open(p, os.O_RDONLY) for p in paths]
    pieces = chunks(sizes)
    buffers = [bytearray(CHUNK) for _ in range(threads)]

    def work(t):
        view = memoryview(buffers[t])
        for i, off, length in pieces[t::threads]:
            done = 0
            while done < length:
                done += os.preadv(fds[i], [view[done:length]], off + done)

    try:
        return sum(sizes) / in_threads(threads, work) / 1e9
    finally:
        for fd in fds:
            os.close(fd)


def filled(nbytes):
    source = np.empty(nbytes, np.uint8)
    source[:] = 7  # touched: the source's own page faults are not part of any probe
    return source


def probe_write(folder, total, threads, own_buffers=False):
    """pwrite of total bytes into new files, one per thread (buffered write() serializes on one file): GB/s. The
    bytes come from one CHUNK reused or, with own_buffers, from a buffer of each thread's whole share (touched
    first; a batch's gigabyte outputs are in no cache)."""
    share = total // threads
    if own_buffers:
        sources = [memoryview(filled(share)) for _ in range(threads)]
    else:
        sources = [memoryview(filled(CHUNK))] * threads
    name = "probe_write_anon" if own_buffers else "probe_write"
    paths = [os.path.join(folder, f"{name}_{t}") for t in range(threads)]
    fds = [os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) for p in paths]

    def work(t):
        for off in range(0, share, CHUNK):
            length = min(CHUNK, share - off)
            base = off if own_buffers else 0
            done = 0
            while done < length:
                done += os.pwrite(fds[t], sources[t][base + done:base + length], off + done)

    try:
        return share * threads / in_threads(threads, work) / 1e9
    finally:
        for fd, path in zip(fds, paths):
            os.close(fd)
            os.unlink(path)


def probe_write_one(folder, total, threads):
    """pwrite by every thread into ONE new file, thread t writing the chunks t, t + threads, ...: GB/s."""
    source = memoryview(filled(CHUNK))
    path = os.path.join(folder, "probe_write_one")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    pieces = chunks([total])

    def work(t):
        for _, off, length in pieces[t::threads]:
            done = 0
            while done < length:
                done += os.pwrite(fd, source[done:length], off + done)

    try:
        return total / in_threads(threads, work) / 1e9
    finally:
        os.close(fd)
        os.unlink(path)


def probe_write_mapped(folder, total, threads):
    """One new file of total bytes, reserved with fallocate and mapped shared, filled by threads in disjoint parts
    (dmlgrad's output path: its pages fault in on first write): GB/s."""
    source = filled(CHUNK)
    path = os.path.join(folder, "probe_write_mapped")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.posix_fallocate(fd, 0, total)
        mapping = mmap.mmap(fd, total, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        target = np.frombuffer(mapping, np.uint8)
        pieces = chunks([total])

        def work(t):
            for _, off, length in pieces[t::threads]:
                np.copyto(target[off:off + length], source[:length])

        seconds = in_threads(threads, work)
        del target
        mapping.close()
        return total / seconds / 1e9
    finally:
        os.close(fd)
        os.unlink(path)


def pinned(nbytes):
    """A pinned host buffer as a numpy array when CUDA is there, else ordinary memory (and False)."""
    if torch is not None and torch.cuda.is_available():
        return torch.empty(nbytes, dtype=torch.uint8, pin_memory=True).numpy(), True
    return np.empty(nbytes, np.uint8), False


@contextlib.contextmanager
def mapped(paths):
    """Every file mapped with MAP_POPULATE (its page-cache pages mapped now), as a list of numpy byte views; the
    views are dropped and the mappings closed on leaving (a mapping with live views cannot close)."""
    maps = []
    for p in paths:
        with open(p, "rb") as f:
            maps.append(mmap.mmap(f.fileno(), 0, mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0x8000),
                                  mmap.PROT_READ))
    views = [np.frombuffer(m, np.uint8) for m in maps]
    try:
        yield views
    finally:
        views.clear()
        for m in maps:
            m.close()


def probe_copy(paths, threads):
    """memcpy from a MAP_POPULATE mapping of the files (page cache) into a pinned staging buffer per thread (the
    inputs' path into staging): (GB/s, whether the staging was pinned)."""
    staging = [pinned(CHUNK) for _ in range(threads)]
    with mapped(paths) as views:
        pieces = chunks([v.size for v in views])

        def work(t):
            for i, off, length in pieces[t::threads]:
                np.copyto(staging[t][0][:length], views[i][off:off + length])

        seconds = in_threads(threads, work)
        total = sum(v.size for v in views)
    return total / seconds / 1e9, staging[0][1]


def cuda_devices():
    return list(range(torch.cuda.device_count())) if torch is not None and torch.cuda.is_available() else []


def probe_pcie(nbytes, repeat=5):
    """Host-to-device and device-to-host GB/s from and to pinned memory: per GPU (median of repeat copies, CUDA
    events) and on every GPU at once (each its own buffers, wall time of all). {} without CUDA."""
    devices = cuda_devices()
    if not devices:
        return {}
    host = [torch.empty(nbytes, dtype=torch.uint8, pin_memory=True) for _ in devices]
    dev = [torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{d}") for d in devices]
    result = {}
    for name, copy in (("h2d", lambda i: dev[i].copy_(host[i], non_blocking=True)),
                       ("d2h", lambda i: host[i].copy_(dev[i], non_blocking=True))):
        per_gpu = []
        for i, d in enumerate(devices):
            with torch.cuda.device(d):
                copy(i)  # warm-up
                times = []
                for _ in range(repeat):
                    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    begin.record()
                    copy(i)
                    end.record()
                    end.synchronize()
                    times.append(begin.elapsed_time(end) / 1e3)
                per_gpu.append(nbytes / statistics.median(times) / 1e9)
        walls = []
        for _ in range(repeat):
            start = time.perf_counter()
            for i, d in enumerate(devices):
                with torch.cuda.device(d):
                    copy(i)
            for d in devices:
                torch.cuda.synchronize(d)
            walls.append(time.perf_counter() - start)
        result[name] = {"per_gpu": per_gpu, "all": len(devices) * nbytes / statistics.median(walls) / 1e9}
    del host, dev
    for d in devices:  # the batches that follow get the GPUs' memory back
        with torch.cuda.device(d):
            torch.cuda.empty_cache()
    return result


def probe_mix(paths, write_share, gpus, threads):
    """The batch's byte mix at once, as the host must carry it: `threads` threads copy every input file (from a
    MAP_POPULATE mapping) into pinned staging and then write_share of those bytes again (the outputs' copies out of
    staging), while the GPUs in `gpus` copy as many bytes host-to-device and write_share of them device-to-host, from
    and to pinned memory, each GPU its share. Returns the GB/s of input-plus-output bytes this mix moves: the
    copies and the DMA contend for the same memory, which no probe alone shows. None without CUDA."""
    if not gpus:
        return None
    staging = [pinned(CHUNK)[0] for _ in range(threads)]
    dma_chunk = 256 << 20
    host = {g: torch.empty(dma_chunk, dtype=torch.uint8, pin_memory=True) for g in gpus}
    dev = {g: torch.empty(dma_chunk, dtype=torch.uint8, device=f"cuda:{g}") for g in gpus}
    for g in gpus:  # warm-up: the first copy on a device sets up its context
        with torch.cuda.device(g):
            dev[g].copy_(host[g])
            torch.cuda.synchronize(g)
    with mapped(paths) as views:
        read_bytes = sum(v.size for v in views)
        pieces = chunks([v.size for v in views])
        pieces += pieces[:int(len(pieces) * write_share)]
        ups = max(1, round(read_bytes / len(gpus) / dma_chunk))
        downs = max(1, round(ups * write_share))

        def work(k):  # threads 0 .. threads-1 copy; one more thread a GPU drives its DMA
            if k < threads:
                for i, off, length in pieces[k::threads]:
                    np.copyto(staging[k][:length], views[i][off:off + length])
                return
            g = gpus[k - threads]
            with torch.cuda.device(g):
                for _ in range(ups):
                    dev[g].copy_(host[g], non_blocking=True)
                for _ in range(downs):
                    host[g].copy_(dev[g], non_blocking=True)
                torch.cuda.synchronize(g)

        seconds = in_threads(threads + len(gpus), work)
    del host, dev
    for g in gpus:
        with torch.cuda.device(g):
            torch.cuda.empty_cache()
    return read_bytes * (1 + write_share) / seconds / 1e9


def measure(inputs, folder, write_total, pcie_bytes, max_threads=None, log=print, write_share=None):
    """Every probe: {"threads": [...], "read": [...], "write": [...], "write_anon": [...], "write_one": [...],
    "write_mapped": [...], "copy": [...], "pinned": bool, "pcie": {...}, "mix": {...}}, the host lists in GB/s per
    thread count; "mix" (with write_share, the batch's output bytes per input byte): probe_mix on GPU 0 alone
    ("one") and on every GPU ("all"), with every CPU of the affinity mask."""
    counts = thread_counts(max_threads)
    out = {"threads": counts, "read": [], "write": [], "write_anon": [], "write_one": [], "write_mapped": [],
           "copy": [], "pinned": False}
    for t in counts:
        out["read"].append(probe_read(inputs, t))
        out["write"].append(probe_write(folder, write_total, t))
        out["write_anon"].append(probe_write(folder, write_total, t, own_buffers=True))
        out["write_one"].append(probe_write_one(folder, write_total, t))
        out["write_mapped"].append(probe_write_mapped(folder, write_total, t))
        gbps, out["pinned"] = probe_copy(inputs, t)
        out["copy"].append(gbps)
        log(f"  {t} thread(s): read {out['read'][-1]:.1f}, write {out['write'][-1]:.1f}, write-mapped "
            f"{out['write_mapped'][-1]:.1f}, copy into {'pinned' if out['pinned'] else 'pageable'} staging "
            f"{gbps:.1f}, write-anon {out['write_anon'][-1]:.1f}, write-one {out['write_one'][-1]:.1f} GB/s",
            flush=True)
    out["pcie"] = probe_pcie(pcie_bytes)
    gpus = cuda_devices()
    if write_share is not None and gpus:
        most = thread_counts(max_threads)[-1]
        out["mix"] = {"one": probe_mix(inputs, write_share, gpus[:1], most),
                      "all": probe_mix(inputs, write_share, gpus, most)}
        log(f"  the batch's mix at once ({most} copying threads): {out['mix']['one']:.1f} GB/s with GPU 0, "
            f"{out['mix']['all']:.1f} GB/s with all {len(gpus)} GPUs", flush=True)
    return out


def print_table(c):
    staging = "pinned" if c["pinned"] else "pageable (no CUDA: not pinned)"
    print(f"\n| threads | page-cache read GB/s | new-file write GB/s (a file each) | new-file write, mapped GB/s "
          f"(one file) | memcpy into {staging} staging GB/s | new-file write from anonymous memory GB/s (a file "
          f"each) | pwrite into ONE new file GB/s (disjoint offsets) |\n|---|---|---|---|---|---|---|")
    for i, t in enumerate(c["threads"]):
        print(f"| {t} | {c['read'][i]:.1f} | {c['write'][i]:.1f} | {c['write_mapped'][i]:.1f} | {c['copy'][i]:.1f} | "
              f"{c['write_anon'][i]:.1f} | {c['write_one'][i]:.1f} |")
    if not c["pcie"]:
        print("\nPCIe: not measured (no CUDA device visible to PyTorch)")
        return
    print("\n| PCIe | " + " | ".join(f"GPU {i}" for i in range(len(c["pcie"]["h2d"]["per_gpu"]))) +
          " | all GPUs at once |\n|---|" + "---|" * (len(c["pcie"]["h2d"]["per_gpu"]) + 1))
    for name, label in (("h2d", "host to device GB/s"), ("d2h", "device to host GB/s")):
        p = c["pcie"][name]
        print(f"| {label} | " + " | ".join(f"{g:.1f}" for g in p["per_gpu"]) + f" | {p['all']:.1f} |")


def best(c, name):
    """The ceiling of a probe: its best figure over the thread counts, and that thread count."""
    i = max(range(len(c["threads"])), key=lambda k: c[name][k])
    return c[name][i], c["threads"][i]


def pcie_ceiling(c, name, gpus, all_gpus):
    """GB/s the GPUs of a --device list can move: one GPU's figure, every GPU's at once, or the sum of a subset's
    (capped by the all-at-once figure). None without CUDA figures."""
    if not c["pcie"]:
        return None
    p, gpus = c["pcie"][name], set(gpus)
    if gpus >= set(all_gpus):
        return p["all"]
    if len(gpus) == 1:
        return p["per_gpu"][min(gpus.pop(), len(p["per_gpu"]) - 1)]
    return min(sum(p["per_gpu"][g] for g in gpus if g < len(p["per_gpu"])), p["all"])
