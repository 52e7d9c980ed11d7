// AMX for the int8 and bf16 GEMMs: whether the process may use them (amx_int8_supported,
// amx_bf16_supported, nova/conv/conv.hpp) and the checks that decide it, exposed for the tests.
#pragma once

#include <string>

#include "kernels/kernel_table.hpp"
#include "kernels/lowp_kernels.hpp"

namespace nova::conv {

// The AMX kernels the plans run and the checks that admit them (lowp.cpp): the hardware's, or, in tests
// on machines without AMX, the scalar model of the tile instructions, so that the engine's use of them
// (tile sessions, row blocks, the cost model, the kernels' choice) is tested everywhere.
struct AmxBackend {
  bool (*int8_admitted)(std::string* reason);
  bool (*bf16_admitted)(std::string* reason);
  Int8GemmFn int8_in_session;
  Bf16GemmFn bf16_in_session;
  void (*session_begin)();
  void (*session_end)();
};
const AmxBackend& amx_backend();

// Tests only: while on, plans made take the scalar tile model as their AMX kernels, admitted where the CPU
// runs the model (avx512-vnni; bf16: avx512-bf16). Plans keep the kernels they were made with.
void use_amx_model_for_tests(bool on);

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

// Runs `candidate` on random bf16 operands (normal values within 2^-3..2^4, so that double sums are
// exact) for the same cases, and checks every element of C against the exact sum: within the bound of
// FP32 summation of the exact products in any order (2 * gamma(kc + 2) * sum |products|), columns
// between the panel and the row stride untouched, a NaN operand giving NaN and an Inf one infinity. On
// a failure, `where` (optional) names the case and the element.
bool bf16_gemm_within_bound(Bf16GemmFn candidate, std::string* where = nullptr);

// bf16_gemm_within_bound in a forked child, as int8_gemm_admitted.
bool bf16_gemm_admitted(Bf16GemmFn candidate, std::string& why);

}  // namespace nova::conv
