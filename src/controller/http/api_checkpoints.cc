// /v1/checkpoints: the index of the checkpoint storage; deletion goes to the storage first
// (controller/policy/checkpoint_deletion.h).
#include <httplib.h>

#include "common/log.h"
#include "controller/http/api_json.h"
#include "controller/http/api_server.h"
#include "controller/http/request_params.h"
#include "controller/policy/checkpoint_deletion.h"
#include "protocol/field_reader.h"

namespace cedana::controller {

void ApiServer::RegisterCheckpointRoutes() {
  Route(Method::kGet, "/v1/checkpoints", Access::kToken,
        [this](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CheckpointFilter f;
          f.owner = p.OwnerFilter();
          if (!f.owner) f.owner = Query(req, "user");
          f.label = Query(req, "label");
          if (auto job = Query(req, "job_id")) {
            CEDANA_ASSIGN_OR_RETURN(int64_t id, ParseInt(*job, "job_id"));
            f.job_id = id;
          }
          CEDANA_ASSIGN_OR_RETURN(PageRequest page, PageOf(req));
          CEDANA_ASSIGN_OR_RETURN(Paged<CheckpointRecord> list,
                                  catalog_.checkpoints().ListPage(f, page));
          nlohmann::json out = nlohmann::json::array();
          for (const auto& c : list.items) out.push_back(ToJson(c, false));
          return Reply{200, out, list.next};
        });

  // Another user's checkpoint answers 404 like a missing one: ids do not leak.
  auto visible = [this](const Principal& p, const std::string& id) -> Result<CheckpointRecord> {
    CEDANA_ASSIGN_OR_RETURN(CheckpointRecord c, catalog_.checkpoints().Get(id));
    if (!p.Sees(c.owner)) return NotFoundError("checkpoint " + id + " not found");
    return c;
  };

  Route(Method::kGet, R"(/v1/checkpoints/([\w.-]+))", Access::kToken,
        [visible](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(CheckpointRecord c, visible(p, req.matches[1].str()));
          return Reply{200, ToJson(c, true)};
        });

  Route(Method::kDelete, R"(/v1/checkpoints/([\w.-]+))", Access::kToken,
        [this, visible](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(CheckpointRecord c, visible(p, req.matches[1].str()));
          CEDANA_RETURN_IF_ERROR(
              DeleteCheckpoint(config_.checkpoint_dir, config_.s3, catalog_.checkpoints(), c));
          log::Info("api: {} deleted checkpoint {} ({}/{})", p.user, c.id, c.owner, c.label);
          return Reply{204, nullptr};
        });

  Route(Method::kPost, R"(/v1/checkpoints/([\w.-]+)/restore)", Access::kToken,
        [this, visible](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(CheckpointRecord c, visible(p, req.matches[1].str()));
          if (c.state != "good")
            return FailedPreconditionError("checkpoint " + c.id + " is " + c.state + ", not good");
          CEDANA_ASSIGN_OR_RETURN(nlohmann::json body, ParseBody(req.body));
          OperationRecord op;
          op.kind = OperationKind::kRestore;
          op.checkpoint_id = c.id;
          op.job_id = c.job_id;
          op.owner = c.owner;
          CEDANA_RETURN_IF_ERROR(protocol::FieldReader(body, "body").String("node", &op.node));
          if (op.node.empty()) op.node = c.node;  // default: where it was taken
          if (op.node.empty())
            return InvalidArgumentError("give the node to restore on: {\"node\": \"...\"}");
          CEDANA_ASSIGN_OR_RETURN(OperationRecord created, catalog_.operations().Create(op));
          return Reply{202, ToJson(created)};
        });
}

}  // namespace cedana::controller
