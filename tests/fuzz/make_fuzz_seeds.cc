// Writes seed inputs, in the formats profcpu itself writes, for the fuzz
// targets whose inputs are binary: make_fuzz_seeds DIR creates DIR/TARGET/NAME.
// They are built with the project's own encoders, so they follow the formats
// as the code changes. scripts/fuzz.sh adds seeds taken from real runs and
// from this machine's /proc; small text seeds are committed in corpus/.
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/byte_io.h"
#include "base/file_io.h"
#include "recording/record_codec.h"
#include "recording/recording_writer.h"
#include "archive/archive.h"
#include "symbolize/symbol_snapshot.h"
#include "symbolize/testing_jitdump.h"

namespace profcpu {
namespace {

namespace rec = recording;

std::string g_root;

void Write(const std::string& target, const std::string& name, absl::string_view bytes) {
  std::string dir = absl::StrCat(g_root, "/", target);
  ::mkdir(dir.c_str(), 0755);
  absl::Status status = base::WriteFile(absl::StrCat(dir, "/", name), bytes);
  if (!status.ok()) {
    std::fprintf(stderr, "make_fuzz_seeds: %s\n", std::string(status.message()).c_str());
    std::exit(1);
  }
}

// A small recording of a process that forks, execs and is sampled in a
// library, a JIT region and the kernel.
std::vector<rec::Record> SampleRecording() {
  std::vector<rec::Record> records;
  rec::Header header;
  header.profcpu_version = "0.1.0";
  header.event_name = "cpu-clock";
  header.event_type = 1;
  header.sample_rate = 99;
  header.start_time_ns = 1000;
  header.start_realtime_ns = 1700000000000000000;
  header.cpu_count = 2;
  header.callgraph = "fp";
  header.hostname = "host";
  header.kernel_release = "6.1.0";
  header.boot_id = "00000000-0000-0000-0000-000000000000";
  header.target = "pid 42";
  header.command_line = "profcpu collect -pid 42";
  records.push_back(header);
  records.push_back(rec::ProcessInfo{1000, 42, {42, 1}, "/app/server --port 80"});
  records.push_back(rec::Comm{1000, 42, 42, "server", false, true});
  rec::Mmap exe;
  exe.time_ns = 1000;
  exe.pid = exe.tid = 42;
  exe.start = 0x400000;
  exe.length = 0x10000;
  exe.file_offset = 0x1000;
  exe.dev_major = 8;
  exe.inode = 1234;
  exe.prot = 5;
  exe.flags = 2;
  exe.build_id = std::string("\x12\x34\x56\x78", 4);
  exe.filename = "/app/server";
  exe.synthesized = true;
  records.push_back(exe);
  rec::Mmap jit = exe;
  jit.start = 0x7f0000000000;
  jit.length = 0x100000;
  jit.file_offset = 0;
  jit.inode = 0;
  jit.build_id.clear();
  jit.filename = "//anon";
  records.push_back(jit);
  rec::Mmap doublemapped = jit;
  doublemapped.start = 0x7f1000000000;
  doublemapped.filename = "/memfd:doublemapper (deleted)";
  records.push_back(doublemapped);
  rec::Mmap vdso = jit;
  vdso.start = 0x7fff0000;
  vdso.length = 0x2000;
  vdso.filename = "[vdso]";
  records.push_back(vdso);
  rec::Sample sample;
  sample.time_ns = 2000;
  sample.pid = sample.tid = 42;
  sample.period = 10101010;
  sample.kernel_ips = {0xffffffff81000010, 0xffffffff81000020};
  sample.user_ips = {0x401234, 0x7f0000001000, 0x7f1000000010, 0x7fff0100, 0x402000};
  records.push_back(sample);
  records.push_back(rec::Fork{{2500, 43, 42, 43, 42}});
  records.push_back(rec::Comm{2600, 43, 43, "worker", true, false});
  rec::Sample child = sample;
  child.time_ns = 3000;
  child.pid = child.tid = 43;
  child.kernel_ips.clear();
  child.truncated = true;
  records.push_back(child);
  records.push_back(rec::Lost{3100, 1, 7, rec::LossReason::kRingBufferFull});
  records.push_back(rec::Lost{3200, 0, 2, rec::LossReason::kSamplesDropped});
  records.push_back(rec::Exit{{3500, 43, 42, 43, 42}});
  rec::DotnetRuntime runtime;
  runtime.time_ns = 3999;
  runtime.pid = 42;
  runtime.runtime_version = "10.0.12";
  runtime.perf_maps = "enabled_by_profcpu";
  runtime.events_bytes = 4096;
  runtime.events_dropped = {{"GCAllocationTick", 3, 240, 2000}};
  records.push_back(runtime);
  records.push_back(rec::Finish{4000, 2, 9, "duration"});
  return records;
}

void RecordingSeeds() {
  std::string stream(rec::kRecordingMagic, sizeof(rec::kRecordingMagic));
  int index = 0;
  for (const rec::Record& record : SampleRecording()) {
    std::string encoded;
    rec::EncodeRecord(record, &encoded);
    stream += encoded;
    // record_codec_fuzzer: u32 type then the payload.
    absl::string_view view(encoded);
    Write("record_codec_fuzzer", absl::StrCat("record-", index++),
          absl::StrCat(view.substr(0, 4), view.substr(rec::kRecordPrefixSize)));
  }
  Write("recording_reader_fuzzer", "small-recording", stream);
  Write("postprocess_fuzzer", "small-recording", stream);
}

void SnapshotSeeds() {
  using symbolize::CodeKind;
  symbolize::SymbolTable table;
  table.Insert({CodeKind::kKernel, 0, 0xffffffff81000010},
               {"[kernel.kallsyms]", {{"do_syscall_64", 0x10, false, "", 0}}});
  table.Insert({CodeKind::kNative, 0, 0x1234},
               {"/app/server", {{"inlined", 4, true, "a.h", 12}, {"main", 0x34, false, "a.c", 7}}});
  table.Insert({CodeKind::kNative, 0, 0x2000}, {"/app/server", {}});
  table.Insert({CodeKind::kProcess, 42, 0x7f0000001000},
               {"/tmp/perf-42.map", {{"void [App] App::Run()[OptimizedTier1]", 0, false, "", 0}}});
  table.Insert({CodeKind::kImported, 1, 2}, {"/lib/x.so", {{"f", 1, false, "", 0}}});
  symbolize::Module module;
  module.path = "/app/server";
  module.dev_major = 8;
  module.inode = 1234;
  module.build_id = "\x12\x34";
  module.example_pid = 42;
  Write("symbol_snapshot_fuzzer", "small-snapshot", symbolize::SerializeSnapshot(table, {module}));
  Write("symbol_snapshot_fuzzer", "empty-snapshot", symbolize::SerializeSnapshot({}, {}));
}

// Kernel perf records as the ring buffer holds them (linux/perf_event.h).
std::string KernelRecord(uint32_t type, uint16_t misc, const std::string& body) {
  std::string out;
  base::ByteWriter w(&out);
  w.U32(type);
  w.U16(misc);
  w.U16(static_cast<uint16_t>(sizeof(perf_event_header) + body.size()));
  return out + body;
}

void SampleId(base::ByteWriter& w) {  // sample_id_all: pid, tid, time, cpu, res
  w.U32(42);
  w.U32(43);
  w.U64(5000);
  w.U32(1);
  w.U32(0);
}

void PerfRecordSeeds() {
  std::string body;
  base::ByteWriter w(&body);
  w.U64(0xffffffff81000010);
  w.U32(42);
  w.U32(43);
  w.U64(5000);
  w.U32(1);
  w.U32(0);
  w.U64(10101010);
  w.U64(6);
  w.U64(static_cast<uint64_t>(PERF_CONTEXT_KERNEL));
  w.U64(0xffffffff81000010);
  w.U64(0xffffffff81000020);
  w.U64(static_cast<uint64_t>(PERF_CONTEXT_USER));
  w.U64(0x401000);
  w.U64(0x402000);
  Write("perf_record_fuzzer", "sample", KernelRecord(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, body));

  body.clear();
  w.U32(42);
  w.U32(43);
  w.U64(0x7f0000000000);
  w.U64(0x1000);
  w.U64(0);
  w.U32(8);
  w.U32(1);
  w.U64(1234);
  w.U64(0);
  w.U32(5);
  w.U32(2);
  body += std::string("/usr/lib/libc.so.6\0\0\0\0\0\0", 24);
  SampleId(w);
  Write("perf_record_fuzzer", "mmap2", KernelRecord(PERF_RECORD_MMAP2, 0, body));

  body.clear();
  w.U32(42);
  w.U32(43);
  body += std::string("worker\0\0", 8);
  SampleId(w);
  Write("perf_record_fuzzer", "comm-exec",
        KernelRecord(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, body));

  body.clear();
  w.U32(43);
  w.U32(42);
  w.U32(43);
  w.U32(42);
  w.U64(5000);
  SampleId(w);
  Write("perf_record_fuzzer", "fork", KernelRecord(PERF_RECORD_FORK, 0, body));

  body.clear();
  w.U64(1);
  w.U64(17);
  SampleId(w);
  Write("perf_record_fuzzer", "lost", KernelRecord(PERF_RECORD_LOST, 0, body));
}

void ArchiveSeeds() {
  std::string files = absl::StrCat(g_root, "/archive-files");
  ::mkdir(files.c_str(), 0755);
  (void)base::WriteFile(files + "/a", "folded;stack 1\n");
  (void)base::WriteFile(files + "/b", "perf-42.map contents\n");
  std::string archive = files + "/prof.tar.gz";
  absl::Status status = archive::WriteTarGz(
      archive, {{"folded_stacks.out", files + "/a"}, {"jit/perf-42.map", files + "/b"}});
  absl::StatusOr<std::string> bytes =
      status.ok() ? base::ReadFileBounded(archive, 1 << 20) : absl::StatusOr<std::string>(status);
  if (!bytes.ok()) {
    std::fprintf(stderr, "make_fuzz_seeds: %s\n", std::string(bytes.status().message()).c_str());
    std::exit(1);
  }
  Write("archive_fuzzer", "small-archive", *bytes);
  for (const char* name : {"/a", "/b", "/prof.tar.gz"}) ::unlink((files + name).c_str());
  ::rmdir(files.c_str());
}

void JitdumpSeeds() {
  using symbolize::testing::JitdumpBuilder;
  for (bool swap : {false, true}) {
    JitdumpBuilder dump(swap);
    dump.Debug(100, 0x7f0000001000, {{0x7f0000001000, 10, "Program.cs"}, {0x7f0000001010, 11, "\xff"}})
        .Load(100, 0x7f0000001000, 0x40, "void [App] App::Run()[OptimizedTier1]")
        .Load(200, 0x7f0000002000, 0x20, "int32 [System.Private.CoreLib] X::Y()[PreJIT]", 1)
        .Move(300, 0x7f0000002000, 0x7f0000003000, 0x20)
        .Unwinding(350, 16, 8, 16)
        .Load(400, 0x7f0000001000, 0x40, "void [App] App::Run()[OptimizedTier1OSR]", 2)
        .Close(500);
    Write("jitdump_fuzzer", swap ? "swapped" : "small", dump.bytes());
  }
  // A CODE_LOAD whose code_size runs past the end of everything (2^64 - 1).
  Write("jitdump_fuzzer", "overflowing-size",
        JitdumpBuilder().Load(100, 0x7f0000001000, 0, "evil").bytes() + std::string(8, '\xff'));
}

void IpcSeeds() {
  std::string hresult;
  base::ByteWriter(&hresult).U32(0x80131385);
  Write("ipc_reply_fuzzer", "unknown-command",
        absl::StrCat(std::string("DOTNET_IPC_V1\0", 14), std::string("\x18\0\xff\xff\0\0", 6),
                     hresult));
  std::string payload;
  base::ByteWriter w(&payload);
  w.U64(1);
  for (int i = 0; i < 16; ++i) w.U8(static_cast<uint8_t>(i));
  for (absl::string_view text : {"/usr/bin/dotnet app.dll", "Linux", "x64", "App", "8.0.1"}) {
    w.U32(static_cast<uint32_t>(text.size() + 1));
    for (char c : text) w.U16(static_cast<uint16_t>(c));
    w.U16(0);
  }
  std::string header("DOTNET_IPC_V1\0", 14);
  base::ByteWriter h(&header);
  h.U16(static_cast<uint16_t>(20 + payload.size()));
  h.U8(0xff);
  h.U8(0);
  h.U16(0);
  Write("ipc_reply_fuzzer", "process-info2", header + payload);
}

}  // namespace
}  // namespace profcpu

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds DIR\n");
    return 2;
  }
  profcpu::g_root = argv[1];
  ::mkdir(argv[1], 0755);
  profcpu::RecordingSeeds();
  profcpu::SnapshotSeeds();
  profcpu::PerfRecordSeeds();
  profcpu::ArchiveSeeds();
  profcpu::JitdumpSeeds();
  profcpu::IpcSeeds();
  return 0;
}
