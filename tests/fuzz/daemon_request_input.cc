#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "common/job_id.h"
#include "common/label.h"
#include "common/unique_fd.h"
#include "fuzz_input.h"
#include "protocol/daemon_request.h"
#include "protocol/wire.h"

namespace cedana::fuzz {
namespace {

// A memfd holding the bytes: MessageReader reads it as it reads a client's socket, and unlike
// a socket pair it never blocks the writer however long the input is.
UniqueFd BytesAsFd(std::string_view bytes) {
  UniqueFd fd(::memfd_create("fuzz-request", MFD_CLOEXEC));
  CEDANA_FUZZ_CHECK(fd.valid());
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::write(fd.get(), bytes.data() + off, bytes.size() - off);
    CEDANA_FUZZ_CHECK(n > 0);
    off += static_cast<size_t>(n);
  }
  CEDANA_FUZZ_CHECK(::lseek(fd.get(), 0, SEEK_SET) == 0);
  return fd;
}

// What ParseDaemonRequest promises the handlers.
void CheckParsed(const protocol::Message& message, const protocol::DaemonRequest& r) {
  CEDANA_FUZZ_CHECK(r.label.empty() || ValidateLabel(r.label).ok());
  CEDANA_FUZZ_CHECK(r.job_id.empty() || ValidateJobId(r.job_id).ok());
  // 0 ("the configured number") only when the field was not given.
  CEDANA_FUZZ_CHECK(r.streams >= (message.contains("streams") ? 1 : 0) && r.streams <= 64);
  CEDANA_FUZZ_CHECK(r.signal_number >= 1 && r.signal_number <= 64);
  CEDANA_FUZZ_CHECK(r.pid >= 0 && r.owner_pid >= 0);
  CEDANA_FUZZ_CHECK(r.uid != static_cast<uid_t>(-1));
  for (const std::string* s : {&r.id, &r.dir, &r.cwd, &r.stdout_path, &r.stderr_path})
    CEDANA_FUZZ_CHECK(s->find('\0') == std::string::npos);
  CEDANA_FUZZ_CHECK(!protocol::DaemonOpName(r.op).empty());
}

}  // namespace

void RunDaemonRequestInput(std::string_view input) {
  UniqueFd fd = BytesAsFd(input);
  protocol::MessageReader reader(fd.get());
  // The daemon reads one request per connection; reading on covers every line of the input.
  // Each Read consumes a line or ends the stream, so this loop is bounded by the input.
  for (;;) {
    Result<protocol::Message> message = reader.Read();
    if (!message.has_value()) {
      if (message.error().code() == Code::kInvalidArgument) continue;
      CEDANA_FUZZ_CHECK(message.error().code() == Code::kUnavailable);
      return;
    }
    (void)protocol::RequestOpName(*message);  // the daemon logs it before parsing
    Result<protocol::DaemonRequest> request = protocol::ParseDaemonRequest(*message);
    if (request.has_value()) {
      CheckParsed(*message, *request);
      // What a client encodes for it is parsed back to the same request (EncodeDaemonRequest).
      protocol::Message again = protocol::WithVersion(protocol::EncodeDaemonRequest(*request));
      Result<protocol::DaemonRequest> reparsed = protocol::ParseDaemonRequest(again);
      CEDANA_FUZZ_CHECK(reparsed.has_value() && *reparsed == *request);
      (void)protocol::EncodeMessage(
          protocol::OkResult({{"op", protocol::DaemonOpName(request->op)}}));
    } else {
      CEDANA_FUZZ_CHECK(request.error().code() == Code::kInvalidArgument);
      // The daemon's reply carries the error message, which may quote the request's bytes.
      (void)protocol::EncodeMessage(protocol::ErrorResult(request.error()));
    }
  }
}

}  // namespace cedana::fuzz
