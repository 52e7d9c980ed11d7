// The driver of the fuzz targets where libFuzzer is not built (GCC, the test command's trees): runs
// the target on every file of the given corpus folders (the inputs that once failed, kept as
// regressions, and seeds), then on a number of random byte strings from a fixed seed.
//
//   nova_fuzz_<target>_replay [--random COUNT] [--mutations M] [--seed S] [--max-len L] [FILE_OR_FOLDER...]
//
// --mutations M also runs M variants of every file: a few bytes changed, inserted or deleted, a cut, a
// repeated span (the mutations of coverage-guided fuzzers, without the coverage), so that inputs with
// structure (JSON, .npy headers, point lists) are explored near their valid forms.
// A failing input aborts inside the target with its message; the driver then names the input and keeps
// its bytes.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size);

namespace {

// The input being run: the abort handler names it and writes its bytes to ./fuzz-failing-input, which
// the driver replays when given it (and which belongs in corpus/<target> once the bug is fixed).
char current_input[512];
const std::vector<uint8_t>* current_bytes = nullptr;

void keep_failing_input(int) {
  const char prefix[] = "the failing input: ";
  (void)!write(2, prefix, sizeof prefix - 1);
  (void)!write(2, current_input, std::strlen(current_input));
  const char suffix[] = "; its bytes are in ./fuzz-failing-input\n";
  (void)!write(2, suffix, sizeof suffix - 1);
  const int fd = open("fuzz-failing-input", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  if (current_bytes != nullptr) (void)!write(fd, current_bytes->data(), current_bytes->size());
  close(fd);
}

void run(const std::vector<uint8_t>& bytes, const std::string& name) {
  std::snprintf(current_input, sizeof current_input, "%s", name.c_str());
  current_bytes = &bytes;
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  current_bytes = nullptr;
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--random COUNT] [--mutations M] [--seed S] [--max-len L] [FILE_OR_FOLDER...]\n",
               argv0);
  return 2;
}

std::vector<uint8_t> mutate(std::vector<uint8_t> bytes, std::mt19937_64& rng) {
  auto at = [&](std::size_t size) {
    return size == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % size);
  };
  static constexpr uint8_t kInteresting[] = {0,   1,   0x7f, 0x80, 0xff, '-', '/', '.',  ',', '0', '9', '"',
                                             '[', ']', '{',  '}',  ':',  'e', 'i', '\'', '(', ')', ' '};
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 6) {
      case 0:  // flip a bit
        if (!bytes.empty()) bytes[at(bytes.size())] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:  // an interesting byte
        if (!bytes.empty()) bytes[at(bytes.size())] = kInteresting[at(sizeof kInteresting)];
        break;
      case 2:  // insert one
        bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at(bytes.size() + 1)),
                     kInteresting[at(sizeof kInteresting)]);
        break;
      case 3:  // delete a span
        if (!bytes.empty()) {
          const std::size_t from = at(bytes.size()),
                            count = 1 + at(std::min<std::size_t>(8, bytes.size() - from));
          bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(from),
                      bytes.begin() + static_cast<std::ptrdiff_t>(std::min(bytes.size(), from + count)));
        }
        break;
      case 4:  // cut the end off
        bytes.resize(at(bytes.size() + 1));
        break;
      default:  // repeat a span
        if (!bytes.empty()) {
          const std::size_t from = at(bytes.size()),
                            count = 1 + at(std::min<std::size_t>(16, bytes.size() - from));
          const std::vector<uint8_t> span(bytes.begin() + static_cast<std::ptrdiff_t>(from),
                                          bytes.begin() + static_cast<std::ptrdiff_t>(from + count));
          bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at(bytes.size() + 1)), span.begin(),
                       span.end());
        }
        break;
    }
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGABRT, keep_failing_input);
  long random_count = 0, mutations = 0, max_len = 64, seed = 1;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--random" || arg == "--mutations" || arg == "--seed" || arg == "--max-len") &&
        i + 1 < argc) {
      char* end = nullptr;
      const long value = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || value < 0) return usage(argv[0]);
      (arg == "--random"      ? random_count
       : arg == "--mutations" ? mutations
       : arg == "--seed"      ? seed
                              : max_len) = value;
    } else if (arg.starts_with("--")) {
      return usage(argv[0]);
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else if (std::filesystem::is_regular_file(arg)) {
      files.emplace_back(arg);
    } else {
      std::fprintf(stderr, "%s: no such file or folder: %s\n", argv[0], arg.c_str());
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    run(bytes, path.string());
    for (long i = 0; i < mutations; ++i)
      run(mutate(bytes, rng),
          path.string() + ", mutation " + std::to_string(i) + " (seed " + std::to_string(seed) + ")");
  }
  for (long i = 0; i < random_count; ++i) {
    std::vector<uint8_t> bytes(static_cast<std::size_t>(rng() % static_cast<uint64_t>(max_len + 1)));
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    run(bytes, "random input " + std::to_string(i) + " (seed " + std::to_string(seed) + ")");
  }
  std::fprintf(stderr, "%zu files, %ld mutations of each and %ld random inputs: no failure\n", files.size(),
               mutations, random_count);
  return 0;
}
