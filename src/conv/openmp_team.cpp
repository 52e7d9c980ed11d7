#include "openmp_team.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "nova/conv/openmp_threads.hpp"
#include "nova/error.hpp"

namespace nova::conv {

namespace {

std::atomic<const OpenMpTeam*> shared_team{nullptr};

// Every team ever shared, kept to the end of the process (see shared_openmp_team) together with the
// library handle that keeps its code loaded.
struct TeamRegistry {
  std::mutex mutex;
  std::vector<std::unique_ptr<OpenMpTeam>> teams;
};
TeamRegistry& registry() {
  static auto* r = new TeamRegistry;  // never destroyed: a plan may run a job during static destruction
  return *r;
}

bool is_openmp_runtime(std::string_view path) {
  const auto slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return base.starts_with("libgomp") || base.starts_with("libiomp") || base.starts_with("libomp.") ||
         base.starts_with("libomp-");
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : ", ") + item;
  return s;
}

}  // namespace

std::vector<std::string> loaded_openmp_runtimes() {
  std::vector<std::string> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        if (info->dlpi_name != nullptr && is_openmp_runtime(info->dlpi_name))
          static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
        return 0;
      },
      &found);
  return found;
}

const OpenMpTeam* shared_openmp_team() {
  const OpenMpTeam* team = shared_team.load(std::memory_order_acquire);
  return team != nullptr && team->owner_pid == static_cast<int>(getpid()) ? team : nullptr;
}

std::string share_openmp_threads(const std::string& library) {
  std::string name = library;
  if (name.empty()) {
    const std::vector<std::string> loaded = loaded_openmp_runtimes();
    if (loaded.empty())
      throw Error(
          "share_openmp_threads: no OpenMP runtime (libgomp, libiomp, libomp) is loaded in this process");
    if (loaded.size() > 1)
      throw Error("share_openmp_threads: several OpenMP runtimes are loaded (" + join(loaded) +
                  "); name the one to share");
    name = loaded.front();
  }
  // RTLD_NOLOAD: only a library already in the process is shared; loading a second runtime would give
  // the process two teams, the contention this is meant to remove. The handle is never closed.
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr)
    throw Error("share_openmp_threads: '" + name +
                "' is not loaded in this process (nova shares the OpenMP runtime " +
                "another library loaded; it does not load one)");
  auto team = std::make_unique<OpenMpTeam>();
  team->parallel = reinterpret_cast<decltype(team->parallel)>(dlsym(handle, "GOMP_parallel"));
  team->thread_num = reinterpret_cast<decltype(team->thread_num)>(dlsym(handle, "omp_get_thread_num"));
  if (team->parallel == nullptr || team->thread_num == nullptr) {
    dlclose(handle);
    throw Error("share_openmp_threads: '" + name +
                "' is not an OpenMP runtime with the GNU interface (no GOMP_parallel or omp_get_thread_num)");
  }
  team->owner_pid = static_cast<int>(getpid());
  Dl_info info{};
  team->library = dladdr(reinterpret_cast<void*>(team->parallel), &info) != 0 && info.dli_fname != nullptr
                      ? std::string(info.dli_fname)
                      : name;
  TeamRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& known : r.teams)  // shared before (in this process): no second entry, no second handle
    if (known->parallel == team->parallel && known->owner_pid == team->owner_pid) {
      dlclose(handle);
      shared_team.store(known.get(), std::memory_order_release);
      return known->library;
    }
  r.teams.push_back(std::move(team));
  shared_team.store(r.teams.back().get(), std::memory_order_release);
  return r.teams.back()->library;
}

void stop_sharing_openmp_threads() {
  shared_team.store(nullptr, std::memory_order_release);
}

std::string shared_openmp_library() {
  const OpenMpTeam* team = shared_openmp_team();
  return team != nullptr ? team->library : std::string();
}

}  // namespace nova::conv
