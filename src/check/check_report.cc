#include "check/check_report.h"

#include <algorithm>

#include <fmt/format.h>

namespace cedana::check {

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk: return "ok";
    case Verdict::kWarn: return "warn";
    case Verdict::kFail: return "FAIL";
    case Verdict::kSkipped: return "skip";
  }
  return "?";
}

bool CheckReport::CanCheckpoint() const { return Count(Verdict::kFail) == 0; }

int CheckReport::Count(Verdict verdict) const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [&](const Finding& f) { return f.verdict == verdict; }));
}

std::string RenderText(const CheckReport& report) {
  size_t width = 0;
  for (const Finding& f : report.findings) width = std::max(width, f.name.size());
  std::string out;
  for (const Finding& f : report.findings) {
    out += fmt::format("{:<4}  {:<{}}  {}\n", VerdictName(f.verdict), f.name, width, f.detail);
    if (!f.fix.empty()) out += fmt::format("{:<4}  {:<{}}  fix: {}\n", "", "", width, f.fix);
  }
  int failed = report.Count(Verdict::kFail);
  int warned = report.Count(Verdict::kWarn);
  if (failed == 0)
    out += fmt::format("\ncheckpoint and restore can work on this node ({} warning{})\n", warned,
                       warned == 1 ? "" : "s");
  else
    out += fmt::format("\ncheckpoint and restore cannot work on this node: {} check{} failed\n",
                       failed, failed == 1 ? "" : "s");
  return out;
}

nlohmann::json ToJson(const CheckReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& f : report.findings) {
    std::string verdict = VerdictName(f.verdict);
    std::transform(verdict.begin(), verdict.end(), verdict.begin(), ::tolower);
    findings.push_back(
        {{"name", f.name}, {"verdict", verdict}, {"detail", f.detail}, {"fix", f.fix}});
  }
  return {{"can_checkpoint", report.CanCheckpoint()}, {"findings", findings}};
}

}  // namespace cedana::check
