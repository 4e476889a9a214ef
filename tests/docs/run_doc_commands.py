#!/usr/bin/python3
"""Runs every dmlgrad command line of README.md and docs/*.md as pasted, so a documentation example cannot break
silently. Usage: run_doc_commands.py DMLGRAD SOURCE_DIR

A command line is a line of a code block (fenced, or indented by four spaces) that runs `dmlgrad` (first, or
after a pipe), with its `\\` continuations. Each runs with bash in a fresh folder where `dmlgrad` is the binary
under test and the .npy files it reads exist, made with the shapes the command's flags imply (the reader of the
docs brings their own). Every command must exit 0. Standard library only.
"""
import concurrent.futures
import glob
import math
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile

OPERATORS = ("relu-grad", "clip-grad", "slice-grad", "maxpool-grad", "resample-grad")
SHELL_OPERATORS = {"|", "||", "&&", ";", ">", ">>", "<", "2>", "&"}


def code_lines(path):
    """(line number, text) of each line inside a code block, continuations joined."""
    lines, fenced, previous_blank, in_indented = [], False, True, False
    joined, first = "", 0
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if line.startswith("```"):
            fenced = not fenced
            continue
        in_indented = line.startswith("    ") and (in_indented or previous_blank)
        previous_blank = not line.strip()
        if not (fenced or in_indented):
            continue
        text = line[4:] if in_indented else line
        if not joined:
            first = number
        if text.rstrip().endswith("\\"):
            joined += text.rstrip()[:-1] + " "
            continue
        lines.append((first, joined + text))
        joined = ""
    return lines


def dmlgrad_words(line):
    """The words of the dmlgrad invocation in a shell line, or None when the line does not run dmlgrad."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return None
    if not words or words[0] in SHELL_OPERATORS:  # a table row or other output, not a command
        return None
    for i, word in enumerate(words):
        if word == "dmlgrad" and (i == 0 or words[i - 1] in SHELL_OPERATORS):
            end = next((j for j in range(i + 1, len(words)) if words[j] in SHELL_OPERATORS), len(words))
            return words[i + 1:end]
    return None


def flags(words):
    """--flag value pairs (and -x/-g/-o) of an operator command; a flag without a value maps to True."""
    found, i = {}, 0
    while i < len(words):
        word = words[i]
        if word.startswith("-") and not re.match(r"^-[0-9.]", word) and word != "-":
            if "=" in word:
                name, value = word.split("=", 1)
                found[name] = value
            elif i + 1 < len(words) and (not words[i + 1].startswith("-") or re.match(r"^-[0-9.]", words[i + 1])
                                         or words[i + 1] == "-"):
                found[word] = words[i + 1]
                i += 1
            else:
                found[word] = True
        i += 1
    return found


def ints(text):
    return [int(v) for v in text.split(",")]


def write_npy(path, shape, seed):
    """A float32 .npy of `shape`, values neither zero nor all alike."""
    count = math.prod(shape)
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d, " % n for n in shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % count, *[((k * 7919 + seed) % 17 - 8) / 4 or 0.5 for k in range(count)]))


def numpy_slice_shape(text, shape):
    """dY's shape for numpy's basic slicing `text` of an array of `shape`."""
    class Key:
        def __getitem__(self, key):
            return key if isinstance(key, tuple) else (key,)
    key = eval("Key()[" + text.strip().removeprefix("[").removesuffix("]") + "]", {"Key": Key})  # the doc's text
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * (len(shape) - len(key) + 1) + key[at + 1:]
    key = key + (slice(None),) * (len(shape) - len(key))
    return [len(range(n)[k]) for n, k in zip(shape, key) if isinstance(k, slice)]


def maxpool_shapes(f):
    window = ints(f["--window-size"])
    spatial = len(window)
    per_axis = lambda name, default: ints(f[name]) if name in f else [default] * spatial
    strides, start, end = per_axis("--strides", 1), per_axis("--start-padding", 0), per_axis("--end-padding", 0)
    dilations = per_axis("--dilations", 1)
    x = [1, 2] + [8] * spatial
    dy = x[:2] + [(x[2 + a] + start[a] + end[a] - ((window[a] - 1) * dilations[a] + 1)) // strides[a] + 1
                  for a in range(spatial)]
    return x, dy


def resample_dy_shape(f):
    dx = ints(f["--output-sizes"])
    rank = len(dx)
    resampled = [rank <= 2 or a >= 2 for a in range(rank)]
    if "--scale-factor" in f:
        factors = [float(v) for v in f["--scale-factor"].split(",")]
        return [math.floor(n * factors[min(a - 2, len(factors) - 1)]) if resampled[a] else n
                for a, n in enumerate(dx)]
    if "--scales" in f:
        return [max(1, round(n * float(s))) for n, s in zip(dx, f["--scales"].split(","))]
    return [2 * n if resampled[a] else n for a, n in enumerate(dx)]


def operator_inputs(words):
    """{path: shape} of the tensors an operator command reads."""
    op, f = words[0], flags(words[1:])
    x, dy = f.get("-x", f.get("--input")), f.get("-g", f.get("--input-gradient"))
    if op in ("relu-grad", "clip-grad"):
        return {x: [2, 3, 4, 4], dy: [2, 3, 4, 4]}
    if op == "slice-grad":
        dx = ints(f["--output-sizes"])
        if "--slice" in f:
            return {dy: numpy_slice_shape(f["--slice"], dx)}
        sizes, strides = ints(f["--input-window-sizes"]), ints(f["--input-window-strides"])
        return {dy: [-(-s // abs(t)) for s, t in zip(sizes, strides)]}
    if op == "maxpool-grad":
        x_shape, dy_shape = maxpool_shapes(f)
        return {x: x_shape, dy: dy_shape}
    return {dy: resample_dy_shape(f)}


def prepare(words, line, folder):
    """Writes what the command reads into `folder`."""
    if not words or words[0] not in OPERATORS + ("batch",) or "--help" in words:
        return
    if words[0] == "batch":
        manifest = os.path.join(folder, "jobs.txt")
        if not os.path.exists(manifest) and "printf" not in line:
            with open(manifest, "w") as f:
                f.write("relu-grad -x x1.npy -g dy1.npy -o dx1.npy\nrelu-grad -x x2.npy -g dy2.npy -o dx2.npy\n")
        jobs = open(manifest).read().splitlines() if os.path.exists(manifest) else [
            s for s in re.findall(r"'([a-z-]+-grad [^']*)'", line)]
        for job in jobs:
            prepare(shlex.split(job), "", folder)
        return
    stdin_file = re.search(r"(?:cat |< ?)([\w.]+\.npy)", line)
    for seed, (path, shape) in enumerate(operator_inputs(words).items()):
        if path == "-":  # standard input: the file the line feeds it from
            path = stdin_file.group(1) if stdin_file else "stdin.npy"
        write_npy(os.path.join(folder, path), shape, seed)


def run_line(binary, page, number, line):
    """Runs one documented line in a fresh folder; a failure's description, or None."""
    where = "{}:{}".format(page, number)
    with tempfile.TemporaryDirectory() as folder:
        os.makedirs(os.path.join(folder, "bin"))
        os.symlink(binary, os.path.join(folder, "bin", "dmlgrad"))
        try:
            prepare(dmlgrad_words(line), line, folder)
        except (KeyError, ValueError, IndexError, SyntaxError) as e:
            return "{}: cannot make the inputs of: {} ({!r})".format(where, line.strip(), e)
        environment = dict(os.environ, PATH=os.path.join(folder, "bin") + ":" + os.environ["PATH"])
        run = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=folder, env=environment,
                             capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            return "{}: exit {}: {}\n    {}".format(where, run.returncode, line.strip(), run.stderr.strip()[-500:])
    return None


def main():
    binary, source = os.path.abspath(sys.argv[1]), sys.argv[2]
    pages = [os.path.join(source, "README.md")] + sorted(glob.glob(os.path.join(source, "docs", "*.md")))
    commands = [(os.path.relpath(page, source), number, line) for page in pages
                for number, line in code_lines(page) if dmlgrad_words(line) is not None]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures = [f for f in pool.map(lambda c: run_line(binary, *c), commands) if f]
    for failure in failures:
        print("FAIL " + failure)
    print("{} of {} documented dmlgrad command lines ran".format(len(commands) - len(failures), len(commands)))
    if len(commands) < 20 or failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
