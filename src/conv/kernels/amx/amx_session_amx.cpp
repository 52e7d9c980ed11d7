// The tile session of the AMX GEMMs (kernels/lowp_kernels.hpp): the tile configuration loaded once on
// the calling thread before a run of `_in_session` kernel calls, and the tiles released after it.
#include "../lowp_kernels.hpp"
#include "amx_tiles.hpp"

namespace nova::conv {

void amx_session_begin() {
  amx_impl::AmxTiles().begin();
}

void amx_session_end() {
  amx_impl::AmxTiles().end();
}

}  // namespace nova::conv
