// TempDir: a fresh directory under $TMPDIR for one test, removed with everything in it when the
// object goes. Test-only; not thread-safe.
#pragma once

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace cedana::storage::testing {

class TempDir {
 public:
  TempDir() {
    const char* base = ::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/cedana-test.XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) std::perror("mkdtemp");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace cedana::storage::testing
