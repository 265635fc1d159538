#include "slurm/plugin_file_version.h"

#include <elf.h>

#include <cstring>

#include <fmt/format.h>

#include "common/fs.h"

namespace cedana::slurm {
namespace {

template <typename T>
bool ReadAt(const std::string& data, uint64_t offset, T* out) {
  if (offset > data.size() || data.size() - offset < sizeof(T)) return false;
  std::memcpy(out, data.data() + offset, sizeof(T));
  return true;
}

}  // namespace

std::string SlurmVersionString(uint32_t number) {
  return fmt::format("{}.{:02}.{}", (number >> 16) & 0xff, (number >> 8) & 0xff, number & 0xff);
}

Result<std::string> PluginFileSlurmVersion(const std::string& path) {
  CEDANA_ASSIGN_OR_RETURN(std::string data, fs::ReadFile(path));
  auto invalid = [&](const char* what) {
    return InvalidArgumentError(path + " is not a SLURM plugin built here (" + what + ")");
  };
  Elf64_Ehdr eh;
  if (!ReadAt(data, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return invalid("no ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return invalid("not 64-bit little-endian");
  auto section = [&](uint16_t i, Elf64_Shdr* sh) {
    return i < eh.e_shnum && ReadAt(data, eh.e_shoff + uint64_t{i} * eh.e_shentsize, sh);
  };
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr symtab, strtab;
    if (!section(i, &symtab)) return invalid("truncated section headers");
    if (symtab.sh_type != SHT_DYNSYM || symtab.sh_entsize != sizeof(Elf64_Sym)) continue;
    if (!section(static_cast<uint16_t>(symtab.sh_link), &strtab)) return invalid("no string table");
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= symtab.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      if (!ReadAt(data, symtab.sh_offset + off, &sym)) return invalid("truncated symbols");
      if (sym.st_shndx == SHN_UNDEF || sym.st_size != sizeof(uint32_t)) continue;
      static constexpr char kName[] = "plugin_version";  // with its NUL
      uint64_t name_at = strtab.sh_offset + sym.st_name;
      if (name_at > data.size() || data.size() - name_at < sizeof kName ||
          std::memcmp(data.data() + name_at, kName, sizeof kName) != 0)
        continue;
      // The symbol's address is in the section that holds it; its file offset follows.
      Elf64_Shdr holder;
      if (!section(sym.st_shndx, &holder) || holder.sh_type == SHT_NOBITS)
        return invalid("plugin_version has no contents");
      uint32_t number;
      if (!ReadAt(data, holder.sh_offset + (sym.st_value - holder.sh_addr), &number))
        return invalid("plugin_version lies outside the file");
      return SlurmVersionString(number);
    }
  }
  return NotFoundError(path + " exports no plugin_version: not a SLURM plugin");
}

}  // namespace cedana::slurm
