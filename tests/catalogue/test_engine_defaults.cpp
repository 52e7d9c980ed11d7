// The convolution engine's default transform is the catalogue's fp32 entry, tile by tile, exactly.
#include <gtest/gtest.h>

#include "common/cli_runner.hpp"
#include "nova/catalogue/catalogue.hpp"
#include "nova/conv/default_transforms.hpp"
#include "nova/exact/io.hpp"
#include "nova/exact/verify.hpp"

namespace nova {
namespace {

TEST(EngineDefaults, EqualTheCatalogueFp32Entries) {
  ASSERT_FALSE(conv::default_tiles().empty());
  for (const TileSize& tile : conv::default_tiles()) {
    const Transform engine = conv::default_transform(tile);
    const Transform cat = catalogue_transform(tile, "fp32");
    EXPECT_EQ(engine.points(), cat.points()) << tile.to_string();
    EXPECT_EQ(engine.AT(), cat.AT()) << tile.to_string();
    EXPECT_EQ(engine.G(), cat.G()) << tile.to_string();
    EXPECT_EQ(engine.BT(), cat.BT()) << tile.to_string();
    EXPECT_TRUE(verify(engine)) << tile.to_string();
    EXPECT_EQ(conv::default_points(tile), cat.points()) << tile.to_string();
  }
}

// The checked-in table (src/conv/default_points_table.hpp) is what `nova catalogue engine-defaults`
// writes from the shipped catalogue.
TEST(EngineDefaults, TableIsRegeneratedFromTheCatalogue) {
  const std::string dir = testing::temp_dir();
  const auto r = testing::run_cli("catalogue engine-defaults -o " + dir + "/table.hpp");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_text_file(dir + "/table.hpp"),
            read_text_file(std::string(NOVA_SOURCE_DIR) + "/src/conv/default_points_table.hpp"));
}

}  // namespace
}  // namespace nova
