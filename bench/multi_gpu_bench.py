#!/usr/bin/env python3
"""`dmlgrad batch` over several GPUs of one host: the same manifest of heavy jobs on 1 GPU and on all of them.

The manifest: max-pool grads (k3 s2 p1) on 32x64x256x256 fp32 and bilinear 2x resample grads on dX
16x64x256x256 fp32, inputs on the local disk (a few distinct input sets, each job its own output). Reports wall
time and throughput per device list, each worker's share of the jobs and busy time (from --json), and checks that
every output of the multi-GPU runs is bit-identical to the one-GPU run's.

Before the batches, with the inputs in the page cache, it measures the host's parallel ceilings for this workload
(bench/host_ceilings.py: page-cache read, new-file write (a file per thread, from one buffer or from anonymous
memory of each thread's whole share; and every thread into one file), memcpy into pinned staging with 1..N
threads, PCIe per GPU and on all GPUs at once, and all of that at once in the batch's proportions: the "mix"), and
after them prints each batch as ratios to those ceilings.

    python3 bench/multi_gpu_bench.py --dmlgrad build/dmlgrad [--jobs 32] [--devices 0 all 0,0,1,1 default]
    python3 bench/multi_gpu_bench.py --baseline before/dmlgrad --dmlgrad after/dmlgrad   # both binaries, one run

With --baseline, every device list runs with the baseline binary first, then with --dmlgrad; all outputs are
compared with the first run's. "default" runs without --device. Each row reports the batch's peak RSS.
--batch-args adds flags to every batch (`--batch-args='--max-in-flight 8'`).
    python3 bench/multi_gpu_bench.py --dmlgrad build/dmlgrad --ceilings-only       # the probes alone
    python3 bench/multi_gpu_bench.py --dmlgrad build/dmlgrad --smoke --jobs 2      # tiny shapes: checks the script
"""
import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import host_ceilings

# (N, C, side) of the max-pool X (dY is half its side) and of the resample dX (dY is twice its side)
SHAPES = {"pool": (32, 64, 256), "resample": (16, 64, 256)}
SMOKE_SHAPES = {"pool": (1, 2, 16), "resample": (1, 2, 8)}


def write_inputs(folder, rng, sets, shapes):
    (pn, pc, ps), (rn, rc, rs) = shapes["pool"], shapes["resample"]
    for i in range(sets):
        np.save(f"{folder}/px{i}.npy", rng.standard_normal((pn, pc, ps, ps), dtype=np.float32))
        np.save(f"{folder}/pdy{i}.npy", rng.standard_normal((pn, pc, ps // 2, ps // 2), dtype=np.float32))
        np.save(f"{folder}/rdy{i}.npy", rng.standard_normal((rn, rc, 2 * rs, 2 * rs), dtype=np.float32))


def manifest(folder, out, jobs, sets, shapes):
    rn, rc, rs = shapes["resample"]
    lines = []
    for j in range(jobs):
        s = j % sets
        lines.append(f"maxpool-grad -x {folder}/px{s}.npy -g {folder}/pdy{s}.npy -o {out}/pool{j}.npy "
                     "--window-size 3,3 --strides 2,2 --start-padding 1,1 --end-padding 0,0")
        lines.append(f"resample-grad -g {folder}/rdy{s}.npy -o {out}/resample{j}.npy "
                     f"--output-sizes {rn},{rc},{rs},{rs} --interpolation-mode linear --scales 1,1,2,2 --input-pixel-offsets 0,0,-0.5,-0.5 "
                     "--output-pixel-offsets 0,0,0.5,0.5")
    return "\n".join(lines) + "\n"


def output_share(shapes):
    """Bytes a pair of jobs writes per byte it reads (float32 everywhere)."""
    (pn, pc, ps), (rn, rc, rs) = shapes["pool"], shapes["resample"]
    read = pn * pc * ps * ps + pn * pc * (ps // 2) ** 2 + rn * rc * (2 * rs) ** 2
    return (pn * pc * ps * ps + rn * rc * rs * rs) / read


def job_bytes(folder, jobs, sets, out):
    """(bytes every job reads from its input files, bytes its outputs hold), summed over the manifest."""
    size = os.path.getsize
    read = sum(size(f"{folder}/px{j % sets}.npy") + size(f"{folder}/pdy{j % sets}.npy") +
               size(f"{folder}/rdy{j % sets}.npy") for j in range(jobs))
    return read, sum(size(os.path.join(out, name)) for name in os.listdir(out))


def gpus_of(devices, all_gpus):
    devices = devices.split(" ")[0]  # without the binary's label
    if devices == "default":
        return all_gpus[:1]
    return all_gpus if devices == "all" else sorted({int(d) for d in devices.split(",")})


def print_ratios(rows, ceilings, read_bytes, write_bytes, all_gpus):
    """Each batch against the ceilings: what share of each one its bytes per second reach, and its wall time
    against two bounds of the host: the stages one after another (inputs copied into staging, then outputs written
    into new files' mappings, each at its best thread count), and overlapped (the slowest stage, PCIe included)."""
    copy, copy_t = host_ceilings.best(ceilings, "copy")
    read, read_t = host_ceilings.best(ceilings, "read")
    write, write_t = host_ceilings.best(ceilings, "write_mapped")
    files, files_t = host_ceilings.best(ceilings, "write_anon")
    print(f"\nCeilings used: memcpy into staging {copy:.1f} GB/s ({copy_t} threads), page-cache read {read:.1f} GB/s "
          f"({read_t} threads), new-file write into a mapping {write:.1f} GB/s ({write_t} threads). Per batch: "
          f"{read_bytes / 1e9:.2f} GB read from input files, {write_bytes / 1e9:.2f} GB written. "
          f"write() from anonymous memory, a file per thread (outputs written by several threads rather than "
          f"through mappings): {files:.1f} GB/s ({files_t} threads); the last three columns use that ceiling "
          f"instead of the mapped write's.")
    print("\n| --device | wall s | read: % of ceiling | copy into staging: % | write: % | host to device: % | "
          "device to host: % | host bound, stages in turn s | its / wall | overlapped bound s | its / wall | "
          "write(), a file each: % | overlapped bound with write() s | its / wall |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for devices, seconds in rows:
        gpus = gpus_of(devices, all_gpus)
        h2d = host_ceilings.pcie_ceiling(ceilings, "h2d", gpus, all_gpus)
        d2h = host_ceilings.pcie_ceiling(ceilings, "d2h", gpus, all_gpus)
        share = lambda nbytes, gbps: "-" if not gbps else f"{100 * nbytes / seconds / 1e9 / gbps:.0f}%"
        serial = read_bytes / copy / 1e9 + write_bytes / write / 1e9
        stages = [read_bytes / copy, write_bytes / write] + [b / g for b, g in ((read_bytes, h2d), (write_bytes, d2h))
                                                             if g]
        overlapped = max(stages) / 1e9
        written = max([read_bytes / copy, write_bytes / files] + stages[2:]) / 1e9
        print(f"| {devices} | {seconds:.2f} | {share(read_bytes, read)} | {share(read_bytes, copy)} | "
              f"{share(write_bytes, write)} | {share(read_bytes, h2d)} | {share(write_bytes, d2h)} | {serial:.2f} | "
              f"{100 * serial / seconds:.0f}% | {overlapped:.2f} | {100 * overlapped / seconds:.0f}% | "
              f"{share(write_bytes, files)} | {written:.2f} | {100 * written / seconds:.0f}% |")
    mix = ceilings.get("mix")
    if not mix:
        return
    print(f"\nThe mix at once (copies into staging and PCIe both ways sharing the host's memory, bench/host_ceilings.py "
          f"probe_mix): {mix['one']:.1f} GB/s of input-plus-output bytes with GPU 0, {mix['all']:.1f} GB/s with all "
          f"GPUs. The bound it sets, and each batch against it (one GPU's figure for a list on one GPU):\n\n"
          f"| --device | wall s | mix bound s | its / wall |\n|---|---|---|---|")
    for devices, seconds in rows:
        gbps = mix["one"] if len(gpus_of(devices, all_gpus)) == 1 else mix["all"]
        bound = (read_bytes + write_bytes) / gbps / 1e9
        print(f"| {devices} | {seconds:.2f} | {bound:.2f} | {100 * bound / seconds:.0f}% |")


class Finished:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run_measured(command):
    """Runs `command`; returns (its result, its peak resident set in bytes, from wait4's rusage)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Finished(child.returncode, out.read().decode(), err.read().decode()), usage.ru_maxrss * 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dmlgrad", required=True)
    parser.add_argument("--baseline", help="a second (before) binary: each device list runs with it too")
    parser.add_argument("--jobs", type=int, default=32, help="jobs of each operator")
    parser.add_argument("--sets", type=int, default=2, help="distinct input sets")
    parser.add_argument("--devices", nargs="+", default=["0", "all"])
    parser.add_argument("--no-ceilings", action="store_true", help="skip the host and PCIe probes")
    parser.add_argument("--ceilings-only", action="store_true", help="the probes, no batch")
    parser.add_argument("--write-gib", type=float, default=4, help="bytes each write probe writes (default 4 GiB)")
    parser.add_argument("--pcie-gib", type=float, default=1, help="bytes of each PCIe copy (default 1 GiB)")
    parser.add_argument("--max-threads", type=int, help="most threads a probe uses (default: the affinity count)")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes and probes: checks the script")
    parser.add_argument("--batch-args", default="", help="more flags for every batch, e.g. '--max-in-flight 8'")
    args = parser.parse_args()
    binary = os.path.abspath(args.dmlgrad)
    listing = subprocess.run([binary, "devices"], capture_output=True, text=True).stdout
    print(listing)
    all_gpus = [int(line.split(":")[0]) for line in listing.splitlines() if line.split(":")[0].isdigit()]
    shapes = SMOKE_SHAPES if args.smoke else SHAPES
    write_total = (16 << 20) if args.smoke else int(args.write_gib * (1 << 30))
    pcie_bytes = (16 << 20) if args.smoke else int(args.pcie_gib * (1 << 30))
    rng = np.random.default_rng(3)
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as folder:
        start = time.perf_counter()
        write_inputs(folder, rng, args.sets, shapes)
        print(f"inputs written in {time.perf_counter() - start:.1f} s")
        # Their writeback to disk would run beside the first batches: on the 2 x H200 host the first row (`--device
        # 0`) then took 3.7 s where the same single worker took 2.0 s as the last row (the default).
        start = time.perf_counter()
        os.sync()
        print(f"inputs synced to disk in {time.perf_counter() - start:.1f} s", flush=True)
        ceilings = None
        if not args.no_ceilings:
            start = time.perf_counter()
            print(f"host ceilings ({len(os.sched_getaffinity(0))} CPUs in the affinity mask):", flush=True)
            inputs = sorted(os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".npy"))
            ceilings = host_ceilings.measure(inputs, folder, write_total, pcie_bytes, args.max_threads,
                                             write_share=output_share(shapes))
            host_ceilings.print_table(ceilings)
            print(f"\nprobes took {time.perf_counter() - start:.1f} s\n", flush=True)
        if args.ceilings_only:
            return
        reference = None
        rows = []
        binaries = ([("before", os.path.abspath(args.baseline))] if args.baseline else []) + [("after", binary)]
        runs = [(label, path, devices) for devices in args.devices for label, path in binaries]
        for run, (label, path, devices) in enumerate(runs):
            out = f"{folder}/out{run}_{devices.replace(',', '_')}"
            os.makedirs(out)
            with open(f"{folder}/jobs.txt", "w") as f:
                f.write(manifest(folder, out, args.jobs, args.sets, shapes))
            device_flag = [] if devices == "default" else ["--device", devices]
            start = time.perf_counter()
            proc, peak_rss = run_measured([path, "batch", f"{folder}/jobs.txt", *device_flag, "--json",
                                           *args.batch_args.split()])
            seconds = time.perf_counter() - start
            if len(binaries) > 1:
                devices = f"{devices} ({label})"
            if proc.returncode != 0:
                sys.exit(f"batch --device {devices} failed ({proc.returncode}): {proc.stderr[-2000:]}")
            summary = json.loads(proc.stdout.splitlines()[-1])["summary"]
            jobs = [json.loads(l) for l in proc.stdout.splitlines()[:-1]]
            gb = sum(j["bytes"] for j in jobs) / 1e9
            same = "reference"
            if reference is None:
                reference = out
                read_bytes, write_bytes = job_bytes(folder, args.jobs, args.sets, out)
            else:
                names = sorted(os.listdir(reference))
                match, mismatch, errors = filecmp.cmpfiles(reference, out, names, shallow=False)
                same = "yes" if not mismatch and not errors and len(match) == len(names) else \
                    f"NO: {mismatch[:3]} {errors[:3]}"
                shutil.rmtree(out)
            shares = ", ".join(f"device {w['device']}: {w['jobs']} jobs, busy {w['busy_s']:.2f} s" +
                               (f" (up {w['upload_s']:.2f}, down {w['download_s']:.2f}), waiting {w['waiting_s']:.2f}"
                                if "waiting_s" in w else "")
                               for w in summary["workers"])
            rows.append((devices, len(jobs), seconds, len(jobs) / seconds, gb / seconds, peak_rss, shares, same))
            print(f"--device {devices}: {seconds:.2f} s, peak RSS {peak_rss / 2**30:.2f} GiB", flush=True)
            if "phases" in summary:  # where the time went (binaries since issue 24's timers)
                p = summary["phases"]
                print(f"  {p['readers']} readers: inputs {p['read_s']:.2f} s, outputs made {p['output_s']:.2f} s; "
                      f"saving {p['save_s']:.2f} s; workers: {shares}", flush=True)
        base = rows[0][2]
        print("\n| --device | jobs | wall s | jobs/s | GB/s (min bytes) | speed-up | peak RSS GiB | workers: share, busy | bit-identical to the first row |")
        print("|---|---|---|---|---|---|---|---|---|")
        for devices, n, seconds, rate, gbps, rss, shares, same in rows:
            print(f"| {devices} | {n} | {seconds:.2f} | {rate:.2f} | {gbps:.1f} | {base / seconds:.2f}x | {rss / 2**30:.2f} | {shares} | {same} |")
        if ceilings:
            print_ratios([(r[0], r[2]) for r in rows], ceilings, read_bytes, write_bytes, all_gpus)


if __name__ == "__main__":
    main()
