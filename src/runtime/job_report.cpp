// job_report: each PE describes itself in a fixed-size record, the records are allgathered
// over the bootstrap, and PE 0 formats the table.
#include "tessera/job_report.hpp"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace tessera {
namespace {

struct Record {
  char node[64];
  char cpuset[64];
  char provider[64];
  char nic[64];
  char transports[256];  // one letter per PE: s(elf), m(apped), p(roxy), u(nreachable)
  std::int32_t node_index;
  std::int32_t node_pe;
  std::int32_t numa;
  std::int32_t pad;
};

void copy(char* dst, std::size_t cap, const std::string& s) {
  std::strncpy(dst, s.c_str(), cap - 1);
  dst[cap - 1] = '\0';
}

std::string node_name(const tessera::Runtime& rt) {
  if (!rt.options().node_id.empty()) return rt.options().node_id;
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) return "localhost";
  return host;
}

const char* transport_name(char c) {
  switch (c) {
    case 's':
      return "self";
    case 'm':
      return "mapped";
    case 'p':
      return "proxy";
    default:
      return "unreachable";
  }
}

// printf into a std::string of whatever length the line needs (a row names every PE).
__attribute__((format(printf, 1, 2))) std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int length = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string line(static_cast<std::size_t>(length > 0 ? length : 0), '\0');
  std::vsnprintf(line.data(), line.size() + 1, fmt, again);
  va_end(again);
  return line;
}

}  // namespace

std::string job_report(Runtime& rt) {
  std::string out;
  const int n = rt.n_pes();
  std::vector<Record> records(static_cast<std::size_t>(n));
  Record& mine = records[static_cast<std::size_t>(rt.pe())];
  std::memset(&mine, 0, sizeof(mine));
  copy(mine.node, sizeof(mine.node), node_name(rt));
  copy(mine.cpuset, sizeof(mine.cpuset), rt.proxy_cpuset().empty() ? "?" : rt.proxy_cpuset());
  copy(mine.provider, sizeof(mine.provider),
       rt.fabric_provider().empty() ? "-" : rt.fabric_provider());
  copy(mine.nic, sizeof(mine.nic), rt.fabric_nic().empty() ? "-" : rt.fabric_nic());
  for (int p = 0; p < n && p < static_cast<int>(sizeof(mine.transports)) - 1; ++p) {
    const tessera::Transport t = rt.transport(p);
    mine.transports[p] = t == tessera::Transport::self     ? 's'
                         : t == tessera::Transport::mapped ? 'm'
                         : t == tessera::Transport::proxy  ? 'p'
                                                           : 'u';
  }
  mine.node_index = rt.node();
  mine.node_pe = rt.node_pe();
  mine.numa = rt.numa_node();
  rt.bootstrap().allgather(records.data(), sizeof(Record));
  if (rt.pe() == 0) {
    out += format("tessera-info: %d PEs, backend %s, bootstrap %s, heap %zu bytes per PE\n", n,
                  tessera::to_string(rt.backend()), rt.bootstrap().name(), rt.heap_size());
    std::map<int, std::pair<std::string, std::vector<int>>> nodes;
    for (int p = 0; p < n; ++p) {
      auto& entry = nodes[records[static_cast<std::size_t>(p)].node_index];
      entry.first = records[static_cast<std::size_t>(p)].node;
      entry.second.push_back(p);
    }
    out += format("nodes: %zu\n", nodes.size());
    for (const auto& [index, node] : nodes) {
      std::string pes;
      for (int p : node.second) pes += (pes.empty() ? "" : ",") + std::to_string(p);
      out += format("  node %d '%s': PEs %s\n", index, node.first.c_str(), pes.c_str());
    }
    out += format("%-4s %-12s %-7s %-5s %-10s %-14s %-8s %s\n", "PE", "node", "node_pe", "numa",
                  "cpuset", "provider", "nic", "transport to PE 0..n-1");
    for (int p = 0; p < n; ++p) {
      const Record& r = records[static_cast<std::size_t>(p)];
      std::string transports;
      for (int q = 0; q < n; ++q)
        transports += std::string(q ? "," : "") + transport_name(r.transports[q]);
      out += format("%-4d %-12s %-7d %-5s %-10s %-14s %-8s %s\n", p, r.node, r.node_pe,
                    r.numa < 0 ? "?" : std::to_string(r.numa).c_str(), r.cpuset, r.provider, r.nic,
                    transports.c_str());
    }
  }
  return out;
}

}  // namespace tessera
