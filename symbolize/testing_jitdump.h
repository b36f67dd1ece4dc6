// Test support: jitdump files built byte by byte as
// tools/perf/Documentation/jitdump-specification.txt lays them out.
#ifndef PROFCPU_SYMBOLIZE_TESTING_JITDUMP_H_
#define PROFCPU_SYMBOLIZE_TESTING_JITDUMP_H_

#include <cstdint>
#include <string>
#include <vector>

namespace profcpu::symbolize::testing {

// Writes a jitdump in either byte order; pid 4242 in the header and records.
class JitdumpBuilder {
 public:
  explicit JitdumpBuilder(bool swap = false, uint64_t flags = 0) : swap_(swap) {
    U32(0x4A695444);
    U32(1);   // version
    U32(40);  // header size
    U32(62);  // EM_X86_64
    U32(0);
    U32(4242);  // pid
    U64(1);     // timestamp
    U64(flags);
  }
  JitdumpBuilder& Load(uint64_t time, uint64_t addr, uint64_t size, const std::string& name,
                       uint64_t index = 0) {
    std::string body;
    Put32(&body, 4242);
    Put32(&body, 4243);
    Put64(&body, addr);  // vma
    Put64(&body, addr);
    Put64(&body, size);
    Put64(&body, index);
    body += name;
    body.push_back('\0');
    body.append(static_cast<size_t>(size), '\xcc');  // the code bytes
    return Record(0, time, body);
  }
  JitdumpBuilder& Move(uint64_t time, uint64_t from, uint64_t to, uint64_t size) {
    std::string body;
    Put32(&body, 4242);
    Put32(&body, 4243);
    Put64(&body, to);
    Put64(&body, from);
    Put64(&body, to);
    Put64(&body, size);
    Put64(&body, 0);
    return Record(1, time, body);
  }
  struct Entry {
    uint64_t addr;
    uint32_t line;
    std::string file;  // "\xff" repeats the previous one
  };
  JitdumpBuilder& Debug(uint64_t time, uint64_t code_addr, const std::vector<Entry>& entries) {
    std::string body;
    Put64(&body, code_addr);
    Put64(&body, entries.size());
    for (const Entry& e : entries) {
      Put64(&body, e.addr);
      Put32(&body, e.line);
      Put32(&body, 0);
      body += e.file;
      body.push_back('\0');
    }
    return Record(2, time, body);
  }
  JitdumpBuilder& Unwinding(uint64_t time, uint64_t unwinding_size, uint64_t hdr_size,
                            size_t data_bytes) {
    std::string body;
    Put64(&body, unwinding_size);
    Put64(&body, hdr_size);
    Put64(&body, unwinding_size);
    body.append(data_bytes, '\x01');
    return Record(4, time, body);
  }
  JitdumpBuilder& Close(uint64_t time) { return Record(3, time, ""); }
  JitdumpBuilder& Raw(uint32_t id, uint64_t time, const std::string& body) {
    return Record(id, time, body);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  JitdumpBuilder& Record(uint32_t id, uint64_t time, const std::string& body) {
    U32(id);
    U32(static_cast<uint32_t>(16 + body.size()));
    U64(time);
    bytes_ += body;
    return *this;
  }
  void Put32(std::string* out, uint32_t v) {
    if (swap_) v = __builtin_bswap32(v);
    out->append(reinterpret_cast<const char*>(&v), 4);
  }
  void Put64(std::string* out, uint64_t v) {
    if (swap_) v = __builtin_bswap64(v);
    out->append(reinterpret_cast<const char*>(&v), 8);
  }
  void U32(uint32_t v) { Put32(&bytes_, v); }
  void U64(uint64_t v) { Put64(&bytes_, v); }

  bool swap_;
  std::string bytes_;
};

}  // namespace profcpu::symbolize::testing

#endif  // PROFCPU_SYMBOLIZE_TESTING_JITDUMP_H_
