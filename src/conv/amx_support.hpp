// AMX for the int8 GEMM: whether the process may use it (amx_int8_supported, nova/conv/conv.hpp) and
// the check that decides it, exposed for the tests.
#pragma once

#include <string>

#include "kernels/kernel_table.hpp"
#include "kernels/lowp_kernels.hpp"

namespace nova::conv {

// Runs `candidate` and `reference` on the same random operands, for every case an int8 GEMM call of
// the engine can take (rows 1..80 including the 16- and 32-row blocks and their tails, 1..4 column
// vectors, channel counts that are and are not multiples of 64), and compares the outputs bit for bit.
// On a difference, `where` (optional) names the first case that differed.
bool int8_gemms_agree(Int8GemmFn candidate, Int8GemmFn reference, std::string* where = nullptr);

}  // namespace nova::conv
