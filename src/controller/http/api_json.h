// JSON forms of the catalog's records, as docs/api.md describes them, and the parsing of
// request bodies (with errors that name the field and what is valid).
#pragma once

#include <nlohmann/json.hpp>

#include "common/phase_durations.h"
#include "common/result.h"
#include "controller/catalog/catalog.h"

namespace cedana::controller {

nlohmann::json ToJson(const JobRecord& j);
nlohmann::json ToJson(const JobEvent& e);
nlohmann::json ToJson(const CheckpointRecord& c, bool with_manifest);
nlohmann::json ToJson(const PolicyRecord& p);
nlohmann::json ToJson(const OperationRecord& o);
nlohmann::json ToJson(const NodeRecord& n, int64_t now_ms);
nlohmann::json ToJson(const TokenRecord& t);
nlohmann::json ToJson(const WindowRecord& w);
nlohmann::json ToJson(const MoveRecord& m);

// A policy from a POST/PUT body (id, owner and times are not taken from it). kInvalidArgument
// naming the field: name 1-64 characters of letters, digits, '-', '_', '.', ' '; interval 10 s
// to 30 days; max_checkpoints null or 1-1000.
Result<PolicyRecord> PolicyFromJson(const nlohmann::json& body);
// An operation's phases as an agent reports them (common/phase_durations.h), with the API's
// bounds: kInvalidArgument naming them unless there are at most 32, each named in 1-32
// characters.
Result<PhaseDurations> PhasesIn(const nlohmann::json& phases);
// Parses a request body as a JSON object; kInvalidArgument when it is not one.
Result<nlohmann::json> ParseBody(const std::string& body);

}  // namespace cedana::controller
