#include "symbolize/unwound_stacks.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/errno_status.h"

namespace profcpu::symbolize {
namespace {

constexpr size_t kMagicSize = 8;
constexpr uint32_t kMaxIps = 4096;  // recording::kMaxCallchainDepth
constexpr uint8_t kTruncated = 1;
// A leaf repair's entry: its ips are the frames put back after the chain's
// leaf (none when the chain was whole), so the file stays small...
constexpr uint8_t kLeafRepair = 2;
// ...unless the chain was replaced by what CFI recovered (it had no frame record).
constexpr uint8_t kReplacesChain = 4;
constexpr int kPerfRegIp = 8;  // PERF_REG_X86_IP

// Little-endian on every host profcpu builds for (byte_io.h asserts it).
template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

UnwoundStack IpOnly(const recording::Sample& sample, uint64_t regs_mask) {
  UnwoundStack out;
  if (std::optional<uint64_t> ip = UserRegister(sample, regs_mask, kPerfRegIp)) {
    out.ips.push_back(*ip);
  }
  out.truncated = true;
  return out;
}

}  // namespace

SavingUnwinder::SavingUnwinder(UserStackUnwinder* inner, std::string path)
    : inner_(inner), path_(std::move(path)) {}

SavingUnwinder::~SavingUnwinder() { (void)Finish(); }

UnwoundStack SavingUnwinder::Unwind(const recording::Sample& sample, uint64_t regs_mask,
                                    const AddressSpaceTracker& spaces) {
  UnwoundStack stack = inner_->Unwind(sample, regs_mask, spaces);
  TookUnwind(sample.time_ns, sample.tid, stack);
  return stack;
}

UnwoundStack SavingUnwinder::RepairLeaf(const UserStackCopy& copy,
                                        const std::vector<uint64_t>& chain,
                                        const AddressSpaceTracker& spaces) {
  UnwoundStack stack = inner_->RepairLeaf(copy, chain, spaces);
  TookRepair(copy.time_ns, copy.tid, chain, stack);
  return stack;
}

std::unique_ptr<UserStackUnwinder> SavingUnwinder::NewWorker(size_t workers) {
  return inner_->NewWorker(workers);
}

void SavingUnwinder::AddWorker(UserStackUnwinder& worker) { inner_->AddWorker(worker); }

void SavingUnwinder::TookUnwind(uint64_t time_ns, uint32_t tid, const UnwoundStack& stack) {
  Save(time_ns, tid, stack.truncated ? kTruncated : 0, stack.ips);
}

void SavingUnwinder::TookRepair(uint64_t time_ns, uint32_t tid, const std::vector<uint64_t>& chain,
                                const UnwoundStack& stack) {
  const uint8_t truncated = stack.truncated ? kTruncated : 0;
  // The result is either the chain with frames inserted after its leaf, or
  // (no frame record at all) CFI's frames alone.
  const size_t added = stack.ips.size() - std::min(stack.ips.size(), chain.size());
  const bool spliced = !chain.empty() && stack.ips.size() >= chain.size() &&
                       stack.ips[0] == chain[0] &&
                       std::equal(chain.begin() + 1, chain.end(), stack.ips.end() - (chain.size() - 1));
  if (spliced) {
    Save(time_ns, tid, kLeafRepair | truncated, absl::MakeConstSpan(stack.ips).subspan(1, added));
  } else {
    Save(time_ns, tid, kLeafRepair | kReplacesChain | truncated, stack.ips);
  }
}

void SavingUnwinder::Save(uint64_t time_ns, uint32_t tid, uint8_t flags,
                          absl::Span<const uint64_t> ips) {
  if (!status_.ok()) return;
  if (file_ == nullptr) {
    file_ = std::fopen(path_.c_str(), "wxe");
    if (file_ == nullptr) {
      status_ = base::ErrnoStatus(errno, absl::StrCat("create ", path_));
      return;
    }
    std::fwrite(kUnwoundStacksMagic, 1, kMagicSize, file_);
  }
  std::string entry;
  Put<uint64_t>(&entry, time_ns);
  Put<uint32_t>(&entry, tid);
  Put<uint8_t>(&entry, flags);
  const uint32_t n = static_cast<uint32_t>(std::min<size_t>(ips.size(), kMaxIps));
  Put<uint32_t>(&entry, n);
  for (uint32_t i = 0; i < n; ++i) Put<uint64_t>(&entry, ips[i]);
  if (std::fwrite(entry.data(), 1, entry.size(), file_) != entry.size()) {
    status_ = base::ErrnoStatus(errno, absl::StrCat("write ", path_));
  }
}

absl::Status SavingUnwinder::Finish() {
  if (file_ != nullptr) {
    if (std::fclose(file_) != 0 && status_.ok()) {
      status_ = base::ErrnoStatus(errno, absl::StrCat("close ", path_));
    }
    file_ = nullptr;
  }
  return status_;
}

absl::StatusOr<std::unique_ptr<ReplayUnwinder>> ReplayUnwinder::Open(const std::string& path) {
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return base::ErrnoStatus(errno, absl::StrCat("open ", path));
  std::unique_ptr<ReplayUnwinder> replay(new ReplayUnwinder(std::move(fd), path));
  char magic[kMagicSize];
  if (!replay->Read(magic, kMagicSize) || std::memcmp(magic, kUnwoundStacksMagic, kMagicSize) != 0) {
    return absl::DataLossError(absl::StrCat(path, " is not a profcpu unwound-stacks file"));
  }
  return replay;
}

bool ReplayUnwinder::Read(void* out, size_t n) {
  char* dest = static_cast<char*>(out);
  while (n > 0) {
    if (buffer_pos_ == buffer_.size()) {
      buffer_.resize(1 << 16);
      ssize_t got;
      do {
        got = ::read(fd_.get(), buffer_.data(), buffer_.size());
      } while (got < 0 && errno == EINTR);
      buffer_.resize(got > 0 ? static_cast<size_t>(got) : 0);
      buffer_pos_ = 0;
      if (got <= 0) return false;
    }
    size_t take = std::min(n, buffer_.size() - buffer_pos_);
    std::memcpy(dest, buffer_.data() + buffer_pos_, take);
    buffer_pos_ += take;
    dest += take;
    n -= take;
  }
  return true;
}

void ReplayUnwinder::Fail(std::string why) {
  failed_ = true;
  warning_ = absl::StrCat(path_, ": ", why,
                          "; the remaining samples keep only their sampled instruction (DWARF) "
                          "or their frame-pointer chain (fp+cfi)");
}

bool ReplayUnwinder::Next(uint64_t want_time_ns, uint32_t want_tid, bool leaf_repair,
                          UnwoundStack* out, uint8_t* flags_out) {
  if (failed_) return false;
  uint64_t time_ns = 0;
  uint32_t tid = 0, n = 0;
  uint8_t flags = 0;
  if (!Read(&time_ns, sizeof(time_ns)) || !Read(&tid, sizeof(tid)) || !Read(&flags, 1) ||
      !Read(&n, sizeof(n))) {
    Fail("ends before the recording's samples with stack copies do");
    return false;
  }
  if (time_ns != want_time_ns || tid != want_tid) {
    Fail(absl::StrCat("an entry is for thread ", tid, " at ", time_ns, " ns, the sample for thread ",
                      want_tid, " at ", want_time_ns, " ns: it belongs to another recording"));
    return false;
  }
  const uint8_t known = leaf_repair ? (kTruncated | kLeafRepair | kReplacesChain) : kTruncated;
  if (n > kMaxIps || (flags & ~known) != 0 || ((flags & kLeafRepair) != 0) != leaf_repair) {
    Fail("is corrupt");
    return false;
  }
  out->ips.resize(n);
  if (n > 0 && !Read(out->ips.data(), n * sizeof(uint64_t))) {
    Fail("ends inside an entry");
    return false;
  }
  out->truncated = (flags & kTruncated) != 0;
  *flags_out = flags;
  return true;
}

UnwoundStack ReplayUnwinder::Unwind(const recording::Sample& sample, uint64_t regs_mask,
                                    const AddressSpaceTracker&) {
  UnwoundStack out;
  uint8_t flags = 0;
  if (!Next(sample.time_ns, sample.tid, /*leaf_repair=*/false, &out, &flags)) {
    return IpOnly(sample, regs_mask);
  }
  return out;
}

UnwoundStack ReplayUnwinder::RepairLeaf(const UserStackCopy& copy,
                                        const std::vector<uint64_t>& chain,
                                        const AddressSpaceTracker&) {
  UnwoundStack saved;
  uint8_t flags = 0;
  if (!Next(copy.time_ns, copy.tid, /*leaf_repair=*/true, &saved, &flags)) return {chain, false};
  if ((flags & kReplacesChain) != 0 || chain.empty()) return saved;
  UnwoundStack out;
  out.truncated = saved.truncated;
  out.ips.reserve(chain.size() + saved.ips.size());
  out.ips.push_back(chain[0]);
  out.ips.insert(out.ips.end(), saved.ips.begin(), saved.ips.end());
  out.ips.insert(out.ips.end(), chain.begin() + 1, chain.end());
  return out;
}

}  // namespace profcpu::symbolize
