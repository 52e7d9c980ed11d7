// The plan's automatic choice between the direct path and the Winograd tiles: a small cost model
// (GEMM flops at the path's rate, transform vector operations, filter bytes streamed per block).
#pragma once

#include <optional>
#include <string>

#include "nova/conv/conv.hpp"

namespace nova::conv {

struct AlgorithmEstimate {
  Algorithm algorithm = Algorithm::kDirect;
  std::optional<TileSize> tile;
  double ms = 0.0;
};

// Estimated time of the direct path and of Winograd with a default tile (tile.r must be shape.R).
AlgorithmEstimate estimate_direct(const ConvShape& shape, Layout layout, int threads, Isa isa);
AlgorithmEstimate estimate_winograd(const ConvShape& shape, Layout layout, int threads, Isa isa, TileSize tile);

// Can Winograd run this shape at all? Empty when it can, otherwise why not.
std::string winograd_ineligible(const ConvShape& shape);

// The fastest estimate among direct and every default tile of the kernel size, with a reason.
AlgorithmEstimate choose_algorithm(const ConvShape& shape, Layout layout, int threads, Isa isa, std::string* reason);

}  // namespace nova::conv
