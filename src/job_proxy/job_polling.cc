#include "job_proxy/job_polling.h"

#include <algorithm>

namespace cedana::job_proxy {

std::chrono::milliseconds NextPollIn(bool preempt_notice, std::time_t now, std::time_t acts_at) {
  if (!preempt_notice) return kPollWithoutNotice;
  if (acts_at <= 0) return kPollWithNotice;
  // Asked again exactly then (a second-resolution end time: no earlier than needed).
  const auto until = std::chrono::seconds(std::max<std::time_t>(0, acts_at - now));
  return std::clamp<std::chrono::milliseconds>(until, kPollWithoutNotice, kPollWithNotice);
}

}  // namespace cedana::job_proxy
