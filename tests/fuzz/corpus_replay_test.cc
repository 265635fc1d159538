// Replays every checked-in fuzz input (tests/fuzz/corpus/<target>/: seeds and every input
// that once crashed a fuzzer) through the fuzz bodies, in the normal build without libFuzzer,
// so a regression shows in the unit tests and not only in a fuzzing run.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "fuzz_input.h"

namespace cedana::fuzz {
namespace {

namespace stdfs = std::filesystem;

// Returns how many inputs were replayed.
int ReplayCorpus(const std::string& target, void (*run)(std::string_view)) {
  stdfs::path dir = stdfs::path(CEDANA_FUZZ_CORPUS_DIR) / target;
  int replayed = 0;
  for (const auto& entry : stdfs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    SCOPED_TRACE(entry.path().string());
    run(bytes.str());
    ++replayed;
  }
  return replayed;
}

TEST(FuzzCorpusTest, ConfigInputsReplay) { EXPECT_GT(ReplayCorpus("config", RunConfigInput), 0); }

TEST(FuzzCorpusTest, ManifestInputsReplay) {
  EXPECT_GT(ReplayCorpus("manifest", RunManifestInput), 0);
}

TEST(FuzzCorpusTest, DaemonRequestInputsReplay) {
  EXPECT_GT(ReplayCorpus("daemon_request", RunDaemonRequestInput), 0);
}

}  // namespace
}  // namespace cedana::fuzz
