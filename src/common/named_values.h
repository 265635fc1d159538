// The names of an enum's values: settings are words where people write them (the config file,
// the environment, requests, manifests) and enums everywhere inside. One table per enum gives
// the parse, the name and the list of valid names an error shows:
//   inline constexpr NamedValue<Codec> kCodecNames[] = {{"none", Codec::kNone}, ...};
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cedana {

template <typename E>
struct NamedValue {
  std::string_view name;
  E value;
};

template <typename E, size_t N>
std::optional<E> ValueNamed(const NamedValue<E> (&table)[N], std::string_view name) {
  for (const NamedValue<E>& v : table)
    if (v.name == name) return v.value;
  return std::nullopt;
}

// "" for a value the table does not name.
template <typename E, size_t N>
std::string_view NameOf(const NamedValue<E> (&table)[N], E value) {
  for (const NamedValue<E>& v : table)
    if (v.value == value) return v.name;
  return "";
}

// "a, b, c": what an error lists as valid.
template <typename E, size_t N>
std::string ValueNames(const NamedValue<E> (&table)[N]) {
  std::string out;
  for (const NamedValue<E>& v : table)
    out += std::string(out.empty() ? "" : ", ") + std::string(v.name);
  return out;
}

}  // namespace cedana
