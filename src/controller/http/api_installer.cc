// The web installer: GET /v1/install/slurm returns a shell script (curl ... | sudo -E bash)
// that installs the node side from the controller's own bundles (controller.bundle_dir:
// <version>.tar.gz with bin/, lib/ and share/cedana/ inside), writes the node config from the
// CEDANA_* variables, registers the node, and sets SLURM up. Also served without the /v1.
#include <httplib.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/version.h"
#include "controller/http/api_server.h"
#include "controller/http/request_params.h"

namespace cedana::controller {
namespace {

constexpr char kBundleSuffix[] = ".tar.gz";

std::vector<std::string> BundleVersions(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() > sizeof kBundleSuffix && name.ends_with(kBundleSuffix))
      out.push_back(name.substr(0, name.size() - (sizeof kBundleSuffix - 1)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool SafeVersion(const std::string& v) {
  if (v.empty() || v.size() > 64 || v[0] == '.') return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
           c == '+';
  });
}

// Single-quotes s for the shell.
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string InstallerScript(const std::string& base_url, const std::string& version) {
  return fmt::format(R"SCRIPT(#!/bin/bash
# cedana node installer, served by the cedana-slurm controller at {url} (version {version}).
# Usage: curl -fsSL ${{CEDANA_URL}}/install/slurm -H "Authorization: Bearer ${{CEDANA_AUTH_TOKEN}}" | sudo -E bash
# Honours the CEDANA_* variables of the configuration (docs/configuration.md), plus
#   CEDANA_PREFIX (default /usr/local)  where bin/ and share/cedana/ go
#   CEDANA_SLURM_SETUP=0                 install only; skip `cedana plugin install slurm` + `cedana slurm setup`
set -euo pipefail
URL={url_q}
VERSION={version_q}
PREFIX=${{CEDANA_PREFIX:-/usr/local}}
say() {{ printf 'cedana installer: %s\n' "$*" >&2; }}
die() {{ say "error: $*"; exit 1; }}
[ -n "${{CEDANA_AUTH_TOKEN:-}}" ] || die "CEDANA_AUTH_TOKEN is not set (use sudo -E to keep it)"
if [ "$(id -u)" != 0 ] && [ -z "${{CEDANA_PREFIX:-}}" ]; then die "run as root (… | sudo -E bash) or set CEDANA_PREFIX"; fi
command -v curl >/dev/null || die "curl is needed"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say "downloading cedana $VERSION from $URL"
# The token goes to curl on its stdin (printf is a builtin), never in an argv that ps shows.
printf 'Authorization: Bearer %s\n' "$CEDANA_AUTH_TOKEN" |
  curl -fsS -H @- "$URL/install/bundle/$VERSION.tar.gz" -o "$tmp/bundle.tar.gz" ||
  die "download of $URL/install/bundle/$VERSION.tar.gz failed"
mkdir -p "$PREFIX"
tar -xzf "$tmp/bundle.tar.gz" -C "$PREFIX" || die "unpacking into $PREFIX failed"
say "installed $("$PREFIX/bin/cedana" version | head -n1) into $PREFIX"
# The node config: defaults, overridden by the CEDANA_* variables given to this script. With
# CEDANA_URL and CEDANA_AUTH_TOKEN set, this also registers the node with the controller.
export CEDANA_URL=${{CEDANA_URL:-$URL}}
"$PREFIX/bin/cedana" version --init-config
if [ "${{CEDANA_SLURM_SETUP:-1}}" != 0 ] && [ -e /etc/slurm/slurm.conf ]; then
  "$PREFIX/bin/cedana" plugin install slurm
  "$PREFIX/bin/cedana" slurm setup
else
  say "SLURM setup skipped; run: cedana plugin install slurm && cedana slurm setup"
fi
say "done. Start the node daemon: cedana daemon start (or systemctl enable --now cedana)"
)SCRIPT",
                     fmt::arg("url", base_url), fmt::arg("url_q", ShellQuote(base_url)),
                     fmt::arg("version", version), fmt::arg("version_q", ShellQuote(version)));
}

}  // namespace

void ApiServer::RegisterInstallerRoutes() {
  // "" when the request carries a good token; else why not, with res.status set (401, or 503
  // when the catalog does not answer).
  auto refusal = [this](const httplib::Request& req, httplib::Response& res) -> std::string {
    std::string why;
    Result<std::optional<Principal>> who = Authenticate(req, &why);
    if (who.has_value() && who->has_value()) return "";
    res.status = who.has_value() ? 401 : 503;
    return who.has_value() ? why : "catalog unavailable";
  };
  auto script = [this, refusal](const httplib::Request& req, httplib::Response& res) {
    if (std::string why = refusal(req, res); !why.empty()) {
      res.set_content("echo 'cedana installer: " + why + "' >&2; exit 1\n", "text/x-shellscript");
      return;
    }
    std::vector<std::string> versions = BundleVersions(config_.controller.bundle_dir);
    std::string version = Query(req, "version").value_or(kVersion);
    if (!SafeVersion(version) ||
        std::find(versions.begin(), versions.end(), version) == versions.end()) {
      std::string have;
      for (const auto& v : versions) have += (have.empty() ? "" : ", ") + v;
      res.status = 404;
      res.set_content(
          fmt::format("echo 'cedana installer: version {} is not available on this controller "
                      "(available: {})' >&2; exit 1\n",
                      SafeVersion(version) ? version : "(invalid)", have.empty() ? "none" : have),
          "text/x-shellscript");
      return;
    }
    // Behind a TLS-terminating proxy the script must come back over https.
    std::string scheme = req.get_header_value("X-Forwarded-Proto") == "https" ? "https" : "http";
    std::string base = scheme + "://" + req.get_header_value("Host") +
                       (req.path.rfind("/v1/", 0) == 0 ? "/v1" : "");
    res.set_content(InstallerScript(base, version), "text/x-shellscript");
  };
  auto bundle = [this, refusal](const httplib::Request& req, httplib::Response& res) {
    if (std::string why = refusal(req, res); !why.empty()) {
      res.set_content(why + "\n", "text/plain");
      return;
    }
    std::string version = req.matches[1].str();
    std::string path = config_.controller.bundle_dir + "/" + version + kBundleSuffix;
    Result<std::string> data =
        SafeVersion(version) ? fs::ReadFile(path) : Result<std::string>(NotFoundError(path));
    if (!data.has_value()) {
      res.status = 404;
      res.set_content("no bundle " + version + "\n", "text/plain");
      return;
    }
    res.set_content(std::move(data).value(), "application/gzip");
  };
  for (const char* prefix : {"", "/v1"}) {
    server_->Get(std::string(prefix) + "/install/slurm", script);
    server_->Get(std::string(prefix) + R"(/install/bundle/([\w.+-]+)\.tar\.gz)", bundle);
  }
}

}  // namespace cedana::controller
