// The agent's bounded on-disk spool: windows wait here, oldest first, until
// the store has them. A window is one file, DIR/<seq, 20 digits>.window
// (spool_file.h), written atomically (a temporary file, fsync, rename, fsync
// of the directory), so a crash leaves every window whole or absent, and an
// agent restarted on the same DIR sends what an earlier run left, in order.
//
// Bounded: the window files never hold more than `cap_bytes` together. When
// a new window would pass the cap, the oldest windows are removed first and
// returned as losses (the agent logs them and counts them in the store); a
// window bigger than the cap alone is itself the loss. Nothing leaves the
// spool uncounted: a damaged file found at Open or Oldest is removed and
// counted too (TakeLosses).
//
// One agent per directory: Open takes an exclusive lock (DIR/lock).
// Not thread-safe: the agent's delivery loop owns it.
#ifndef PROFCPU_FLEET_AGENT_SPOOL_H_
#define PROFCPU_FLEET_AGENT_SPOOL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/unique_fd.h"

namespace profcpu::fleet {

// A window that left the spool without reaching the store, and why:
// "spool full (cap 64 MB)", "corrupt spool file", "spool write cut short".
struct SpoolLoss {
  uint64_t window_id = 0;  // 0 when a damaged file no longer says
  uint64_t samples = 0;    // 0 when a damaged file no longer says
  std::string reason;
};

struct SpoolEntry {
  uint64_t seq = 0;  // the spool's own order; Remove(seq) once delivered
  uint64_t window_id = 0;
  uint64_t samples = 0;
  std::string payload;
};

class Spool {
 public:
  // Opens (creating it, mode 0700, when missing) the spool at `dir` with a
  // cap on the window files' total size. Recovers an earlier run's windows
  // in order: a temporary file whose write completed (the crash came
  // between fsync and rename) is put in place, one cut short is removed and
  // counted lost; files with a window name but a bad header are removed and
  // counted lost; files of other names are left alone and not counted. If
  // the recovered windows exceed the cap (it was lowered), the oldest go as
  // losses. Losses found here wait in TakeLosses().
  // FailedPrecondition when another agent holds the directory.
  static absl::StatusOr<Spool> Open(const std::string& dir, uint64_t cap_bytes);

  Spool(Spool&&) = default;
  Spool& operator=(Spool&&) = default;

  // Adds a window after every window spooled before. Returns the windows
  // evicted to make room (oldest first), or the new window itself when it
  // alone exceeds the cap. The new file is written and synced before any
  // eviction, so an error (disk full, ...) leaves the spool as it was and the
  // window unspooled: the caller counts it lost with the error as reason.
  absl::StatusOr<std::vector<SpoolLoss>> Put(uint64_t window_id, uint64_t samples,
                                             absl::string_view payload);

  // The oldest window, read and verified, or nullopt when the spool is
  // empty. A damaged file on the way is removed and counted (TakeLosses).
  std::optional<SpoolEntry> Oldest();

  // Removes a window (delivered). NotFound when no window has that seq.
  // Not synced to disk: after a crash a delivered window may come back and
  // be sent again; delivery's check of the window id in the store (fleet
  // contract: "Retry of a window") keeps it from counting twice.
  absl::Status Remove(uint64_t seq);

  // Losses found outside Put (damaged files at Open or Oldest) since the
  // last call.
  std::vector<SpoolLoss> TakeLosses();

  uint64_t size_bytes() const { return size_bytes_; }  // window files' total size
  size_t windows() const { return files_.size(); }
  uint64_t cap_bytes() const { return cap_bytes_; }
  const std::string& dir() const { return dir_; }

  // DIR/<seq, 20 digits>.window
  static std::string FileName(uint64_t seq);

 private:
  struct FileInfo {
    uint64_t window_id = 0;
    uint64_t samples = 0;
    uint64_t bytes = 0;  // the whole file
  };

  Spool(std::string dir, uint64_t cap_bytes, base::UniqueFd lock)
      : dir_(std::move(dir)), cap_bytes_(cap_bytes), lock_(std::move(lock)) {}

  absl::Status Recover();
  std::string PathOf(uint64_t seq) const;
  // Unlinks the file of `seq` and forgets it.
  void Drop(uint64_t seq);
  // Evicts oldest windows until `incoming` more bytes fit under the cap.
  void MakeRoom(uint64_t incoming, std::vector<SpoolLoss>* losses);
  std::string FullReason() const;

  std::string dir_;
  uint64_t cap_bytes_ = 0;
  base::UniqueFd lock_;
  std::map<uint64_t, FileInfo> files_;  // by seq: oldest first
  uint64_t size_bytes_ = 0;
  uint64_t next_seq_ = 1;
  std::vector<SpoolLoss> pending_losses_;
};

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_AGENT_SPOOL_H_
