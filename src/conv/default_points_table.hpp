// The points of the engine's default transforms. Shared by the library and the build-time generator
// (codegen/gen_tile_transforms.cpp), so the generated code and the run-time defaults cannot drift apart.
#pragma once

namespace nova::conv {

struct DefaultPointsEntry {
  int m;
  int r;
  const char* points;
};

inline constexpr DefaultPointsEntry kDefaultPoints[] = {
    {2, 3, "0, 1, -1, inf"},
    {4, 3, "0, 1, -1, 2, -2, inf"},
    {6, 3, "0, 1, -1, 2, -2, 1/2, -1/2, inf"},
    {8, 3, "0, 1, -1, 2, -2, 1/2, -1/2, 3/4, -3/4, inf"},
    {2, 5, "0, 1, -1, 2, -2, inf"},
    {4, 5, "0, 1, -1, 2, -2, 1/2, -1/2, inf"},
};

}  // namespace nova::conv
