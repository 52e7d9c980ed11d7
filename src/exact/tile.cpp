#include "nova/exact/tile.hpp"

#include <cctype>
#include <charconv>

#include "nova/error.hpp"

namespace nova {

std::string TileSize::to_string() const { return "F(" + std::to_string(m) + "," + std::to_string(r) + ")"; }

void validate_tile(const TileSize& tile) {
  if (tile.m < 1 || tile.r < 1)
    throw Error("tile " + tile.to_string() + ": m and r must both be at least 1");
  if (tile.n() > kMaxPoints)
    throw Error("tile " + tile.to_string() + " needs n = m+r-1 = " + std::to_string(tile.n()) +
                " points, beyond nova's limit of " + std::to_string(kMaxPoints));
}

TileSize parse_tile(std::string_view text) {
  const std::string original(text);
  std::string s;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  if (s.size() >= 2 && (s[0] == 'F' || s[0] == 'f') && s[1] == '(' && s.back() == ')') s = s.substr(2, s.size() - 3);
  auto sep = s.find_first_of(",xX");
  auto bad = [&] { return Error("cannot parse tile '" + original + "' (expected m,r or F(m,r), e.g. 6,3)"); };
  if (sep == std::string::npos) throw bad();
  TileSize tile;
  auto parse_int = [&](std::string_view part, int& out) {
    if (part.empty() || part.size() > 6) throw bad();
    std::string_view digits = part[0] == '-' ? part.substr(1) : part;
    for (char c : digits)
      if (!std::isdigit(static_cast<unsigned char>(c))) throw bad();
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    if (ec != std::errc() || ptr != part.data() + part.size()) throw bad();
  };
  parse_int(std::string_view(s).substr(0, sep), tile.m);
  parse_int(std::string_view(s).substr(sep + 1), tile.r);
  validate_tile(tile);
  return tile;
}

}  // namespace nova
