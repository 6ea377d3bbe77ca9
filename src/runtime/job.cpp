#include "runtime/job.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>

#include "runtime/disagreement.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

std::string host_node_id(const Options& o) {
  if (!o.node_id.empty()) return o.node_id;
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

// What each PE tells the others at init. pid, pid_namespace and boot_id say which PEs are
// processes this PE can watch (same machine, same pid namespace; see PeerWatch).
struct PeInfo {
  char node_id[240];
  std::uint64_t heap_size;
  std::uint32_t backend;
  std::uint32_t checked;
  std::uint32_t p2p;
  std::uint32_t pid;
  std::uint64_t pid_namespace;
  char boot_id[40];
};

std::uint64_t pid_namespace() {
  struct stat st {};
  if (::stat("/proc/self/ns/pid", &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_ino);
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

// Throws Error(code) on this PE, "<what>: PEs 0-2 <describe(a)>; PE 3 <describe(b)>", unless
// every PE reported the same `field`.
template <class Field, class Describe>
void require_agreement(const std::vector<PeInfo>& infos, Field PeInfo::*field, int pe,
                       ErrorCode code, const std::string& what, Describe describe) {
  std::vector<Field> values;
  values.reserve(infos.size());
  for (const PeInfo& info : infos) values.push_back(info.*field);
  if (std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) == values.end())
    return;
  throw Error(code, pe, what + ": " + describe_disagreement(values, describe));
}

}  // namespace

JobLayout form_job(Bootstrap& bootstrap, const Options& options, Backend backend) {
  JobLayout job;
  job.pe = bootstrap.rank();
  job.n_pes = bootstrap.size();
  job.node_id = host_node_id(options);
  if (job.node_id.size() >= sizeof(PeInfo::node_id)) {
    throw Error(ErrorCode::invalid_argument, job.pe,
                "node id '" + job.node_id + "' is longer than " +
                    std::to_string(sizeof(PeInfo::node_id) - 1) + " bytes");
  }
  std::vector<PeInfo> infos(static_cast<std::size_t>(job.n_pes));
  PeInfo& mine = infos[static_cast<std::size_t>(job.pe)];
  std::memset(&mine, 0, sizeof(mine));
  std::memcpy(mine.node_id, job.node_id.c_str(), job.node_id.size());
  mine.heap_size = options.heap_size;
  mine.backend = static_cast<std::uint32_t>(backend);
  mine.checked = options.checked ? 1 : 0;
  mine.p2p = options.p2p ? 1 : 0;
  mine.pid = static_cast<std::uint32_t>(::getpid());
  mine.pid_namespace = pid_namespace();
  const std::string boot = boot_id();
  std::memcpy(mine.boot_id, boot.c_str(), std::min(boot.size(), sizeof(mine.boot_id) - 1));
  bootstrap.allgather(infos.data(), sizeof(PeInfo));

  require_agreement(infos, &PeInfo::heap_size, job.pe, ErrorCode::invalid_argument,
                    "PEs disagree on the heap size (TESSERA_HEAP_SIZE)",
                    [](std::uint64_t v) { return "asked for " + std::to_string(v) + " bytes"; });
  require_agreement(
      infos, &PeInfo::backend, job.pe, ErrorCode::backend,
      "PEs chose different backends (set TESSERA_BACKEND, or make a GPU visible to "
      "every PE)",
      [](std::uint32_t v) { return std::string("chose ") + to_string(static_cast<Backend>(v)); });
  require_agreement(infos, &PeInfo::p2p, job.pe, ErrorCode::invalid_argument,
                    "PEs disagree on mapping peers (TESSERA_P2P)", [](std::uint32_t v) {
                      return std::string(v != 0 ? "maps its node's peers" : "set TESSERA_P2P=0");
                    });

  // Nodes are numbered in order of their first PE.
  job.node_of_pe.resize(static_cast<std::size_t>(job.n_pes));
  for (int p = 0; p < job.n_pes; ++p) {
    std::string name(infos[static_cast<std::size_t>(p)].node_id);
    auto it = std::find(job.node_names.begin(), job.node_names.end(), name);
    if (it == job.node_names.end()) it = job.node_names.insert(job.node_names.end(), name);
    job.node_of_pe[static_cast<std::size_t>(p)] = static_cast<int>(it - job.node_names.begin());
  }
  job.node = job.node_of_pe[static_cast<std::size_t>(job.pe)];
  for (int p = 0; p < job.n_pes; ++p) {
    if (job.node_of_pe[static_cast<std::size_t>(p)] == job.node) {
      if (p == job.pe) job.node_pe = static_cast<int>(job.node_pes.size());
      job.node_pes.push_back(p);
    }
  }

  for (int p = 0; p < job.n_pes; ++p) {
    const PeInfo& info = infos[static_cast<std::size_t>(p)];
    if (p == job.pe || info.pid == mine.pid || info.pid_namespace != mine.pid_namespace ||
        info.pid_namespace == 0 || boot.empty() ||
        std::strncmp(info.boot_id, mine.boot_id, sizeof(mine.boot_id)) != 0) {
      continue;
    }
    job.watchable.push_back({p, static_cast<pid_t>(info.pid)});
  }
  return job;
}

}  // namespace tessera::detail
