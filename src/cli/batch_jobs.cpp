#include "cli/batch_jobs.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/batch_dependencies.h"
#include "cli/list_parsing.h"
#include "core/error.h"
#include "core/printable.h"
#include "gpu/gpu.h"
#include "io/npy.h"
#include "io/standard_streams.h"

namespace dmlgrad::cli {
namespace {

// What a single command can do but a job of many cannot: share the standard streams, or explain instead of run.
void require_batch_job(const OperatorRequest& request) {
    if (request.common.explain) throw UsageError("--explain is not a job (run it as a single command)");
    const OperatorCommand& c = request.command;
    bool uses_stream = is_standard_stream(c.output.path);
    for (const Operand& input : c.inputs) uses_stream = uses_stream || is_standard_stream(input.path);
    if (uses_stream) throw UsageError("- (standard input or output) cannot be a batch job's file");
}

BatchJob parse_job(const ManifestLine& line, const BatchOptions& options) {
    BatchJob job{line.number, std::nullopt, {}, {}, {}, {}};
    try {
        OperatorRequest request = parse_operator_words(line.words);
        require_batch_job(request);
        request.common.cpu = request.common.cpu || options.cpu;
        if (request.common.api.empty()) request.common.api = options.api;
        request.common.verbosity = options.verbose ? Verbosity::verbose : Verbosity::quiet;
        job.request = std::move(request);
    } catch (const UsageError& e) {
        job.error = e.what();
    }
    return job;
}

JobFiles files_of(const BatchJob& job) {
    JobFiles files{job.line, {}, {}};
    if (!job.request) return files;
    const OperatorRequest& r = *job.request;
    for (const Operand& input : r.command.inputs) files.reads.push_back(input.path);
    if (!r.common.compare.empty()) files.reads.push_back(r.common.compare);
    files.writes = r.command.output.path;
    return files;
}

// Names each operator input that is an earlier job's output, and that output, by the file's identity.
void link_resident_keys(std::vector<BatchJob>& jobs) {
    for (BatchJob& job : jobs) {
        if (!job.request) continue;
        const std::vector<Operand>& inputs = job.request->command.inputs;
        job.input_keys.assign(inputs.size(), {});
        for (size_t p : job.producers) {
            const std::string key = identity_key(file_identity(jobs[p].request->command.output.path));
            for (size_t i = 0; i < inputs.size(); ++i) {
                if (identity_key(file_identity(inputs[i].path)) != key) continue;
                job.input_keys[i] = key;
                jobs[p].output_key = key;
            }
        }
    }
}

}  // namespace

Shard parse_shard(const std::string& text) {
    if (text.empty()) return {};
    const size_t slash = text.find('/');
    const auto error = [&] { return UsageError(fmt::format("--shard {}: expected I/N with 0 <= I < N", text)); };
    if (slash == std::string::npos) throw error();
    const std::vector<int64_t> index = parse_int_list("--shard", text.substr(0, slash));
    const std::vector<int64_t> count = parse_int_list("--shard", text.substr(slash + 1));
    if (index.size() != 1 || count.size() != 1 || index[0] < 0 || count[0] < 1 || index[0] >= count[0]) throw error();
    return {uint64_t(index[0]), uint64_t(count[0])};
}

std::vector<ManifestLine> load_manifest(const std::string& path) {
    if (path == "-") {
        if (standard_input_closed()) throw UsageError("<stdin>: standard input is closed (no manifest)");
        return read_manifest(std::cin, "<stdin>");
    }
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw UsageError(fmt::format("{}: is a folder, expected a manifest file", printable_path(path)));
    std::ifstream file(path);
    if (!file) throw UsageError(fmt::format("{}: cannot open the manifest", printable_path(path)));
    return read_manifest(file, path);
}

std::vector<BatchJob> parse_jobs(const std::vector<ManifestLine>& lines, const BatchOptions& options,
                                 const Shard& shard, const std::string& manifest) {
    std::vector<BatchJob> all;
    std::vector<JobFiles> files;
    for (const ManifestLine& line : lines) {
        all.push_back(parse_job(line, options));
        files.push_back(files_of(all.back()));
    }
    // Over the whole manifest, so that every shard refuses it alike.
    const std::vector<std::vector<size_t>> producers = find_producers(files, manifest);
    std::vector<BatchJob> jobs;
    std::vector<size_t> in_shard(all.size(), SIZE_MAX);  // each line's index in `jobs`
    for (size_t i = 0; i < all.size(); ++i) {
        if (i % shard.count != shard.index) continue;
        BatchJob& job = all[i];
        for (size_t p : producers[i]) {
            if (in_shard[p] != SIZE_MAX) {
                job.producers.push_back(in_shard[p]);
            } else if (job.request) {  // run by another process, at any time: not something to read
                job.request.reset();
                job.error = fmt::format(
                    "reads the output of line {}, which another shard runs (a chain of jobs "
                    "must stay in one shard)",
                    all[p].line);
            }
        }
        in_shard[i] = jobs.size();
        jobs.push_back(std::move(job));
    }
    link_resident_keys(jobs);
    return jobs;
}

// Why an existing output is not what the job would write ("" when it is): --skip-existing trusts only a readable
// .npy of the output's dtype and shape, in the order the job writes, whose size is its header's plus the payload's
// (read_npy_header checks the size; the payload is not read).
std::string incomplete_output_reason(const std::string& path, const TensorInfo& expected) {
    NpyHeader header;
    try {
        header = read_npy_header(path);
    } catch (const std::exception& e) {
        return e.what();
    }
    if (header.info.dtype != expected.dtype || header.info.shape != expected.shape)
        return fmt::format("{}: holds {} {}, the job writes {} {}", printable_path(path), dtype_name(header.info.dtype),
                           shape_string(header.info.shape), dtype_name(expected.dtype), shape_string(expected.shape));
    if (header.big_endian || header.fortran_order)
        return fmt::format("{}: not in the byte and element order the job writes", printable_path(path));
    return {};
}

std::vector<std::optional<int>> worker_devices(const BatchOptions& options) {
    if (options.cpu || options.devices.empty()) return {std::nullopt};
    std::vector<std::optional<int>> devices;
    if (options.devices == "all") {
        for (const GpuDeviceInfo& d : list_gpu_devices(gpu_api_of(options.api))) devices.emplace_back(d.index);
        return devices;
    }
    for (int64_t index : parse_int_list("--device", options.devices)) {
        if (index < 0 || index > 1024) throw UsageError(fmt::format("--device {}: not a device index", index));
        devices.emplace_back(int(index));
    }
    return devices;
}

void require_devices_present(const std::vector<std::optional<int>>& devices, const BatchOptions& options) {
    if (options.cpu || options.devices.empty() || options.devices == "all") return;
    const std::vector<GpuDeviceInfo> present = list_gpu_devices(gpu_api_of(options.api));
    for (const std::optional<int>& index : devices)
        if (index && *index >= int(present.size()))
            throw UsageError(fmt::format(
                "--device {}: no such device; this machine has {} (index 0 to {}), see `dmlgrad devices`", *index,
                present.size() == 1 ? "1 device" : fmt::format("{} devices", present.size()), present.size() - 1));
}

}  // namespace dmlgrad::cli
