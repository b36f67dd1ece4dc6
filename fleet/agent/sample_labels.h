// The labels every stored sample carries, by the store's column names
// (fleet/store/schema.h), in the columns' order.
#ifndef PROFCPU_FLEET_AGENT_SAMPLE_LABELS_H_
#define PROFCPU_FLEET_AGENT_SAMPLE_LABELS_H_

#include <string>
#include <tuple>

namespace profcpu::fleet {

struct SampleLabels {
  std::string node;
  std::string container;  // the container's id
  std::string cgroup;
  std::string pod_uid;
  std::string pod;
  std::string namespace_;
  std::string comm;
  std::string exe;
  std::string runtime;   // "dotnet 8.0.11"
  std::string build_id;  // the main executable's, hex

  auto Tie() const {
    return std::tie(node, container, cgroup, pod_uid, pod, namespace_, comm, exe, runtime,
                    build_id);
  }
  friend bool operator==(const SampleLabels& a, const SampleLabels& b) { return a.Tie() == b.Tie(); }
  template <typename H>
  friend H AbslHashValue(H h, const SampleLabels& l) {
    return H::combine(std::move(h), l.Tie());
  }
};

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_AGENT_SAMPLE_LABELS_H_
