// Fuzz inputs: the bodies of the fuzz targets, as plain functions. Each feeds one input
// through the same entry point the product uses on untrusted bytes (the config file parser,
// the manifest parser, the node daemon's request reader and parser) and checks what must hold
// for every input. A broken check aborts; an exception escaping a body is a finding too (the
// project catches exceptions only at entry points and turns them into Status). The libFuzzer
// targets (fuzz_<name>.cc, built with CEDANA_FUZZ=ON) and the corpus replay test of the normal
// build (corpus_replay_test.cc) both call them. Stateless and side-effect free apart from a
// memfd per request input; thread-compatible.
#pragma once

#include <string_view>

// Prints the failed condition and aborts, so libFuzzer saves the input as a crash.
#define CEDANA_FUZZ_CHECK(cond) \
  ((cond) ? static_cast<void>(0) : ::cedana::fuzz::FailCheck(#cond, __FILE__, __LINE__))

namespace cedana::fuzz {

[[noreturn]] void FailCheck(const char* condition, const char* file, int line);

// Config file text (LoadConfigText), then what a loaded config prints (ConfigToJson) loads
// back to the same config.
void RunConfigInput(std::string_view input);
// Manifest text (ParseManifest, VerifyManifest), then a parsed manifest prints, re-parses and
// signs canonically: the MAC of a re-read manifest still verifies.
void RunManifestInput(std::string_view input);
// Bytes a client writes to the daemon's socket, read by MessageReader and each message parsed
// by ParseDaemonRequest; a parsed request encodes (EncodeDaemonRequest) and parses back to
// itself; the reply the daemon would write is encoded too.
void RunDaemonRequestInput(std::string_view input);

}  // namespace cedana::fuzz
