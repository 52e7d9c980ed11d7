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

// int8_gemms_agree run in a forked child process, so that a kernel that faults (a wrong tile
// configuration, a bad address) costs the check, not the caller's process. True when the child found
// the same bits; otherwise `why` says what happened (crashed with a signal, differed and where, or no
// child could be started).
bool int8_gemm_admitted(Int8GemmFn candidate, Int8GemmFn reference, std::string& why);

}  // namespace nova::conv
