// The engine's default transforms: the catalogue's fp32 entry for each tile (data/catalogue.json,
// preset fp32), points and exact diagonal scaling (D1, D2 relative to the lagrange triple, as
// ScalingSpec::parse reads them). Shared by the library and the build-time generator
// (codegen/gen_tile_transforms.cpp), so the generated code and the run-time defaults cannot drift apart.
//
// GENERATED from data/catalogue.json by `nova catalogue engine-defaults` (tools/regenerate_catalogue.sh
// rewrites this file); tests/catalogue checks that every entry equals the catalogue's exactly.
#pragma once

namespace nova::conv {

struct DefaultPointsEntry {
  int m;
  int r;
  const char* points;
  const char* scaling;
};

inline constexpr DefaultPointsEntry kDefaultPoints[] = {
    {2, 3, "0, 1, -1, inf",
     "d1=1,1,1,1;d2=1,1/2,1/2,1"},
    {4, 3, "0, 5/8, -5/8, 14/9, -14/9, inf",
     "d1=1,1,1,52488/515431,52488/515431,1;d2=1,1,1,1,1,1"},
    {6, 3, "0, 1/2, -1/2, 1, -1, 2, -2, inf",
     "d1=1,1,1,1,1,1,1,1;d2=1,1,1,1,1,1,1,1"},
    {7, 3, "2/9, -2/9, 2/3, -2/3, 9/8, -9/8, 11/5, -11/5, inf",
     "d1=1,1,1,1,1,1,1,1,1;d2=1,1,1,1,1,1,1822500000/603567126701,-1822500000/603567126701,1"},
    {8, 3, "0, 3/7, -3/7, 4/5, -4/5, 5/4, -5/4, 19/8, -19/8, inf",
     "d1=1,1,1,1,1,1,-6422528/104110029,1468006400/1842977741139,1,1;d2=1,1,1,1,1,1,1,1,1468006400/1842977741139,1"},
    {2, 5, "0, 2/3, -2/3, 3/2, -3/2, inf",
     "d1=1,1,1,1,1,1;d2=1,1,1,8/65,8/65,1"},
    {4, 5, "0, 1/2, -1/2, 1, -1, 2, -2, inf",
     "d1=1,1,1,1,1,1,1,1;d2=1,1,1,1,1,1,1,1"},
};

}  // namespace nova::conv
