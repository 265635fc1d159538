// HookGuard: the one wrapper around every C ABI hook of our SLURM plugins (docs/architecture.md,
// "Code conventions"). It runs the C++ body, and anything thrown is logged with the plugin's prefix
// and turned into `on_exception`: a bug in a plugin must never crash or block a SLURM process, nor
// fail a job.
#pragma once

#include <exception>

extern "C" void slurm_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

namespace cedana::plugins {

template <typename F>
int HookGuard(const char* prefix, const char* hook, int on_exception, F&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    slurm_error("%s: %s: internal error: %s", prefix, hook, e.what());
  } catch (...) {
    slurm_error("%s: %s: internal error: unknown exception", prefix, hook);
  }
  return on_exception;
}

}  // namespace cedana::plugins
