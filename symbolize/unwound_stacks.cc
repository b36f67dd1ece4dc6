#include "symbolize/unwound_stacks.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"

namespace profcpu::symbolize {
namespace {

constexpr size_t kMagicSize = 8;
constexpr uint32_t kMaxIps = 4096;  // recording::kMaxCallchainDepth
constexpr uint8_t kTruncated = 1;
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
  if (!status_.ok()) return stack;
  if (file_ == nullptr) {
    file_ = std::fopen(path_.c_str(), "wxe");
    if (file_ == nullptr) {
      status_ = base::ErrnoStatus(errno, absl::StrCat("create ", path_));
      return stack;
    }
    std::fwrite(kUnwoundStacksMagic, 1, kMagicSize, file_);
  }
  std::string entry;
  Put<uint64_t>(&entry, sample.time_ns);
  Put<uint32_t>(&entry, sample.tid);
  Put<uint8_t>(&entry, stack.truncated ? kTruncated : 0);
  const uint32_t n = static_cast<uint32_t>(std::min<size_t>(stack.ips.size(), kMaxIps));
  Put<uint32_t>(&entry, n);
  for (uint32_t i = 0; i < n; ++i) Put<uint64_t>(&entry, stack.ips[i]);
  if (std::fwrite(entry.data(), 1, entry.size(), file_) != entry.size()) {
    status_ = base::ErrnoStatus(errno, absl::StrCat("write ", path_));
  }
  return stack;
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
                          "; the remaining DWARF samples keep only their sampled instruction");
}

UnwoundStack ReplayUnwinder::Unwind(const recording::Sample& sample, uint64_t regs_mask,
                                    const AddressSpaceTracker&) {
  if (failed_) return IpOnly(sample, regs_mask);
  uint64_t time_ns = 0;
  uint32_t tid = 0, n = 0;
  uint8_t flags = 0;
  if (!Read(&time_ns, sizeof(time_ns)) || !Read(&tid, sizeof(tid)) || !Read(&flags, 1) ||
      !Read(&n, sizeof(n))) {
    Fail("ends before the recording's DWARF samples do");
    return IpOnly(sample, regs_mask);
  }
  if (time_ns != sample.time_ns || tid != sample.tid) {
    Fail(absl::StrCat("an entry is for thread ", tid, " at ", time_ns, " ns, the sample for thread ",
                      sample.tid, " at ", sample.time_ns, " ns: it belongs to another recording"));
    return IpOnly(sample, regs_mask);
  }
  if (n > kMaxIps || (flags & ~kTruncated) != 0) {
    Fail("is corrupt");
    return IpOnly(sample, regs_mask);
  }
  UnwoundStack out;
  out.ips.resize(n);
  if (n > 0 && !Read(out.ips.data(), n * sizeof(uint64_t))) {
    Fail("ends inside an entry");
    return IpOnly(sample, regs_mask);
  }
  out.truncated = (flags & kTruncated) != 0;
  return out;
}

}  // namespace profcpu::symbolize
