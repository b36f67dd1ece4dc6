// Frame names of a Profile's locations, as folding names them: the perf
// script writer's lines for the location, read back by stackcollapse's rules
// (frame_name.h). Shared by the folded writer and profile.html, so both name
// every frame alike.
#ifndef PROFCPU_FOLD_LOCATION_NAMER_H_
#define PROFCPU_FOLD_LOCATION_NAMER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "fold/folded_writer.h"
#include "fold/frame_name.h"
#include "fold/profile.h"

namespace profcpu::fold {

// Names each location once (per Java-ness of the root, which changes names).
class LocationNamer {
 public:
  LocationNamer(const Profile& profile, const FoldOptions& options);

  // The location's frame names, outermost first (an inlined location names
  // several frames; a location printed as nothing, none).
  const std::vector<std::string>& Names(uint32_t location, bool java);
  // The same names as ids of the caller's own name table: `intern` turns a
  // name into its id, called only the first time a location is asked for.
  const std::vector<uint32_t>& NameIds(uint32_t location, bool java,
                                       absl::FunctionRef<uint32_t(const std::string&)> intern);

 private:
  const Profile& profile_;
  FrameNamer namer_;
  std::vector<std::vector<std::string>> names_[2];
  std::vector<bool> done_[2];
  std::vector<std::vector<uint32_t>> ids_[2];
  std::vector<bool> ids_done_[2];
  std::string lines_;
  std::string line_names_;
};

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_LOCATION_NAMER_H_
