// spdlog's compiled part, built once here (SPDLOG_COMPILED_LIB, set for every layer in CMakeLists.txt). Header-only
// spdlog compiled its whole implementation into each logging file, about ten seconds a file and three builds over
// in `make test`; the binary still carries spdlog inside it and needs no libspdlog where it runs.
#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/sinks/stdout_color_sinks-inl.h>
#include <spdlog/spdlog-inl.h>

// The templates the command line uses (src/cli/runner.cpp: a stderr logger in colour where it is a terminal).
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stderr_sink<spdlog::details::console_mutex>;
template std::shared_ptr<spdlog::logger> spdlog::stderr_color_mt<spdlog::synchronous_factory>(const std::string&,
                                                                                              spdlog::color_mode);
