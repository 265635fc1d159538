#include "image/chunk_index.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/bounded_json.h"
#include "image/chunking.h"
#include "image/pack.h"
#include "image/tar.h"
#include "storage/checkpoint_store.h"

namespace cedana::image {
namespace {

using nlohmann::json;

Status Bad(const std::string& what) { return InvalidArgumentError("chunk index: " + what); }

Result<ChunkedFile> ParseFile(const json& f, size_t i) {
  std::string at = fmt::format("files[{}]", i);
  if (!f.is_object()) return Bad(at + " must be an object");
  ChunkedFile file;
  auto name = f.find("name");
  if (name == f.end() || !name->is_string()) return Bad(at + ".name must be a string");
  file.name = name->get<std::string>();
  if (!IsPagesImage(file.name) || file.name.size() > kTarMaxNameLength ||
      !storage::ValidateComponent("name", file.name).ok())
    return Bad(at + ".name must be a pages image's name (pages-<id>.img)");
  auto size = f.find("size");
  if (size == f.end() || !size->is_number_unsigned()) return Bad(at + ".size must be a size");
  file.size = size->get<uint64_t>();
  auto chunks = f.find("chunks");
  if (chunks == f.end() || !chunks->is_array()) return Bad(at + ".chunks must be an array");
  uint64_t total = 0;
  for (size_t c = 0; c < chunks->size(); ++c) {
    const json& e = (*chunks)[c];
    std::string where = fmt::format("{}.chunks[{}]", at, c);
    // [digest, raw_bytes]: the compact form keeps a large job's index a few hundred KiB.
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number_unsigned())
      return Bad(where + " must be [digest, bytes]");
    ChunkEntry entry{e[0].get<std::string>(), e[1].get<uint64_t>()};
    if (!storage::IsChunkDigest(entry.digest))
      return Bad(where + ": digest must be 64 lowercase hex digits");
    if (entry.raw_bytes == 0 || entry.raw_bytes > kMaxChunkBytes)
      return Bad(where + fmt::format(": bytes must be 1..{}", kMaxChunkBytes));
    total += entry.raw_bytes;
    file.chunks.push_back(std::move(entry));
  }
  if (total != file.size)
    return Bad(fmt::format("{}: chunks add up to {} bytes, the file has {}", at, total, file.size));
  return file;
}

}  // namespace

std::set<std::string> ChunkIndex::Digests() const {
  std::set<std::string> out;
  for (const ChunkedFile& f : files)
    for (const ChunkEntry& c : f.chunks) out.insert(c.digest);
  return out;
}

std::string ChunkIndexToJson(const ChunkIndex& index) {
  json files = json::array();
  for (const ChunkedFile& f : index.files) {
    json chunks = json::array();
    for (const ChunkEntry& c : f.chunks) chunks.push_back(json::array({c.digest, c.raw_bytes}));
    files.push_back({{"name", f.name}, {"size", f.size}, {"chunks", std::move(chunks)}});
  }
  return json{{"files", std::move(files)}}.dump() + "\n";
}

Result<ChunkIndex> ParseChunkIndex(std::string_view text) {
  Result<json> parsed = ParseBoundedJson(text);
  if (!parsed.has_value()) return std::move(parsed).error().WithContext("chunk index");
  const json& obj = *parsed;
  if (!obj.is_object()) return Bad("not a JSON object");
  auto files = obj.find("files");
  if (files == obj.end() || !files->is_array()) return Bad("files must be an array");
  ChunkIndex index;
  std::set<std::string> names;
  for (size_t i = 0; i < files->size(); ++i) {
    CEDANA_ASSIGN_OR_RETURN(ChunkedFile file, ParseFile((*files)[i], i));
    if (!names.insert(file.name).second) return Bad("file " + file.name + " is named twice");
    index.files.push_back(std::move(file));
  }
  return index;
}

}  // namespace cedana::image
