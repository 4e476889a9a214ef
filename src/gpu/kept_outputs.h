#pragma once
// The bookkeeping of ResidentTensors (ops/backend.h) that both GPU backends share: the next run's keys, and the
// outputs kept under them (at most kMaxKept, the oldest dropped first), whatever a backend's buffer type is.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "ops/backend.h"

namespace dmlgrad {

template <class BufferT>
class KeptOutputs {
public:
    void set_next_run_keys(std::vector<std::string> input_keys, std::string output_key) {
        next_input_keys_ = std::move(input_keys);
        next_output_key_ = std::move(output_key);
    }
    // Whether the next run keeps its output or may take an input from device memory. A batch sets keys for every
    // job, most of them "": those must not keep the job from being overlapped.
    bool has_next_run_keys() const {
        return !next_output_key_.empty() ||
               std::any_of(next_input_keys_.begin(), next_input_keys_.end(), [](const auto& k) { return !k.empty(); });
    }
    // For each input, the kept output its key names when it has the input's size (else null); the input keys are
    // used up.
    std::vector<BufferT*> take_inputs(std::span<const Tensor* const> inputs) {
        std::vector<BufferT*> found(inputs.size(), nullptr);
        const std::vector<std::string> keys = std::exchange(next_input_keys_, {});
        for (size_t i = 0; i < inputs.size() && i < keys.size(); ++i) {
            const auto kept = std::find_if(kept_.begin(), kept_.end(), [&](const Kept& k) {
                return !keys[i].empty() && k.key == keys[i] && k.bytes == inputs[i]->bytes();
            });
            if (kept != kept_.end()) found[i] = &kept->buffer;
        }
        resident_inputs_ = size_t(std::count_if(found.begin(), found.end(), [](const BufferT* b) { return b; }));
        return found;
    }
    // The output's buffer becomes a kept output when the run's key asks for it (`buffer` is left empty, so the
    // next run of its slot makes a new one); the output key is used up.
    void keep_output(BufferT& buffer, uint64_t bytes) {
        std::string key = std::exchange(next_output_key_, {});
        if (key.empty()) return;
        std::erase_if(kept_, [&](const Kept& k) { return k.key == key; });
        if (kept_.size() == ResidentTensors::kMaxKept) kept_.pop_front();
        kept_.push_back({std::move(key), std::move(buffer), bytes});
        buffer = {};
    }
    size_t resident_inputs_of_last_run() const { return resident_inputs_; }

private:
    struct Kept {
        std::string key;
        BufferT buffer;
        uint64_t bytes = 0;
    };
    std::deque<Kept> kept_;  // oldest first
    std::vector<std::string> next_input_keys_;
    std::string next_output_key_;
    size_t resident_inputs_ = 0;
};

}  // namespace dmlgrad
