// profile.html's data and document: the frames named as folding names them,
// the samples in time order, the encoding docs/profile-page.md specifies
// (read back here by an independent reader), and a document no hostile name
// can break out of.
#include <zlib.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "base/file_io.h"
#include "fold/profile_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "render/profile_page_data.h"
#include "render/profile_page_writer.h"
#include "render/xml_text.h"

namespace profcpu::render {
namespace {

using fold::testing::ProfileMaker;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kStart = 1'000'000'000;

// Reads the data section as the page does.
class DataReader {
 public:
  explicit DataReader(std::string bytes) : bytes_(std::move(bytes)) {}
  uint64_t Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t byte = static_cast<uint8_t>(bytes_.at(at_++));
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) break;
    }
    return value;
  }
  int64_t Zigzag() {
    const uint64_t v = Varint();
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
  }
  std::string Bytes(size_t n) {
    std::string out = bytes_.substr(at_, n);
    at_ += n;
    return out;
  }
  bool AtEnd() const { return at_ == bytes_.size(); }

 private:
  std::string bytes_;
  size_t at_ = 0;
};

struct Decoded {
  std::vector<std::string> names;
  std::vector<uint8_t> flags;
  std::vector<std::pair<uint32_t, uint32_t>> nodes;  // parent, name; [0] unused
  std::vector<uint64_t> times, leaves, threads, weights;

  // Node's names from the root frame to the node.
  std::string Path(uint32_t node) const {
    std::string path;
    while (node != 0) {
      path = names[nodes[node].second] + (path.empty() ? "" : ";") + path;
      node = nodes[node].first;
    }
    return path;
  }
};

Decoded Decode(const std::string& bytes) {
  DataReader in(bytes);
  EXPECT_EQ(in.Bytes(4), "PCPG");
  EXPECT_EQ(in.Varint(), 1u);
  Decoded d;
  const uint64_t names = in.Varint();
  for (uint64_t i = 0; i < names; ++i) d.names.push_back(in.Bytes(in.Varint()));
  in.Bytes(6 * names);  // colours
  for (uint64_t i = 0; i < names; ++i) d.flags.push_back(static_cast<uint8_t>(in.Bytes(1)[0]));
  d.nodes.resize(in.Varint());
  for (size_t i = 1; i < d.nodes.size(); ++i) {
    d.nodes[i].first = static_cast<uint32_t>(in.Varint());
    d.nodes[i].second = static_cast<uint32_t>(in.Varint());
    EXPECT_LT(d.nodes[i].first, i);
  }
  const uint64_t threads = in.Varint();
  for (uint64_t i = 0; i < 3 * threads; ++i) in.Varint();
  const uint64_t samples = in.Varint();
  const bool weighted = in.Varint() & 1;
  uint64_t time = 0;
  for (uint64_t i = 0; i < samples; ++i) d.times.push_back(time += in.Zigzag());
  for (uint64_t i = 0; i < samples; ++i) d.leaves.push_back(in.Varint());
  for (uint64_t i = 0; i < samples; ++i) d.threads.push_back(in.Varint());
  for (uint64_t i = 0; i < samples; ++i) d.weights.push_back(weighted ? in.Varint() : 1);
  EXPECT_TRUE(in.AtEnd());
  return d;
}

std::string Between(const std::string& text, const std::string& open, const std::string& close) {
  const size_t a = text.find(open);
  if (a == std::string::npos) return "";
  const size_t b = text.find(close, a + open.size());
  return text.substr(a + open.size(), b - a - open.size());
}

std::string Inflate(const std::string& data, size_t size) {
  std::string out(size, '\0');
  uLongf length = size;
  EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(out.data()), &length,
                       reinterpret_cast<const Bytef*>(data.data()), data.size()),
            Z_OK);
  out.resize(length);
  return out;
}

TEST(ProfilePageTest, SamplesInTimeOrderWithTheirStacksNamedAsFolded) {
  ProfileMaker maker;
  const uint32_t main_fn = maker.Location(0x1000, false, "/app", {{"main"}});
  const uint32_t work = maker.Location(0x2000, false, "/app", {{"helper", 0, true}, {"work"}});
  const uint32_t idle = maker.Location(0xffff1000, true, "[kernel.kallsyms]", {{"do_idle"}});
  // Out of time order, as per-CPU buffers deliver them.
  maker.Sample("app", 10, 11, 0, kStart + 3'000'000, 1, "cpu-clock", {work, main_fn});
  maker.Sample("app", 10, 12, 1, kStart + 1'000'000, 1, "cpu-clock", {main_fn});
  maker.Sample("swapper", 0, 0, 1, kStart + 2'000'000, 1, "cpu-clock", {idle});

  PageDataOptions options;
  options.start_ns = kStart;
  const PageData data = BuildPageData(maker.profile(), options);
  const Decoded d = Decode(EncodePageData(data));
  EXPECT_THAT(d.times, ElementsAre(1000, 2000, 3000));
  EXPECT_EQ(d.Path(d.leaves[0]), "app;main");
  EXPECT_EQ(d.Path(d.leaves[1]), "swapper;do_idle");
  EXPECT_EQ(d.Path(d.leaves[2]), "app;main;work;helper");
  EXPECT_NE(d.threads[0], d.threads[2]);  // two threads of one process
  EXPECT_THAT(d.weights, ElementsAre(1, 1, 1));
  EXPECT_EQ(data.total_weight, 3u);
  const uint32_t idle_name = d.nodes[d.leaves[1]].second;
  EXPECT_EQ(d.flags[idle_name], kPageNameIdle | kPageNameKernel);
  EXPECT_EQ(d.flags[d.nodes[d.leaves[0]].second], 0);
  // "main" is one node whichever stack passes through it.
  EXPECT_EQ(d.nodes[d.nodes[d.nodes[d.leaves[2]].first].first].first, d.nodes[d.leaves[0]].first);
}

TEST(ProfilePageTest, WeightsArePeriodsWhenFoldingWeighsByPeriod) {
  ProfileMaker maker;
  const uint32_t f = maker.Location(0x1000, false, "/app", {{"wait"}});
  maker.Sample("app", 1, 1, 0, kStart, 2500, "offcpu-time", {f});
  maker.Sample("app", 1, 1, 0, kStart + 10, 0, "offcpu-time", {f});
  PageDataOptions options;
  options.start_ns = kStart;
  options.fold.weight_by_period = true;
  const PageData data = BuildPageData(maker.profile(), options);
  EXPECT_TRUE(data.weighted);
  EXPECT_THAT(Decode(EncodePageData(data)).weights, ElementsAre(2500, 1));
  EXPECT_EQ(data.total_weight, 2501u);
}

TEST(ProfilePageTest, KernelAnnotationColoursButIsNotShown) {
  ProfileMaker maker;
  const uint32_t k = maker.Location(0xffff2000, true, "[kernel.kallsyms]", {{"schedule"}});
  maker.Sample("java", 1, 1, 0, kStart, 1, "cpu-clock", {k});
  PageDataOptions options;
  options.fold.annotate_kernel = true;
  options.palette = Palette::kJava;
  const PageData data = BuildPageData(maker.profile(), options);
  ASSERT_EQ(data.names.size(), 2u);
  EXPECT_EQ(data.names[1].text, "schedule");
  // The java palette colours "_[k]" frames orange, as in the SVG.
  EXPECT_EQ(data.names[1].color, FrameColor(Palette::kJava, false, "schedule_[k]"));
  EXPECT_NE(data.names[1].color, FrameColor(Palette::kJava, false, "schedule"));
}

TEST(ProfilePageTest, HostileNamesCannotLeaveTheirElements) {
  ProfileMaker maker;
  const uint32_t evil = maker.Location(
      0x1000, false, "/app", {{"</script><img src=x onerror=alert`1`>\"'&\xff\xfe bad"}});
  maker.Sample("app</script>", 1, 1, 0, kStart, 1, "cpu-clock", {evil});
  PageMeta meta;
  meta.title = "</script><script>alert(1)</script>";
  meta.subtitle = "pid 1 \xc3";
  const PageData data = BuildPageData(maker.profile(), {});
  const auto page = RenderProfilePage(data, meta);
  ASSERT_TRUE(page.ok()) << page.status();
  // The only "</script" are the page's own three closings.
  size_t closings = 0;
  for (size_t at = page->find("</script"); at != std::string::npos;
       at = page->find("</script", at + 1)) {
    ++closings;
  }
  EXPECT_EQ(closings, 3u);
  EXPECT_THAT(*page, Not(HasSubstr("<img")));
  EXPECT_THAT(*page, HasSubstr("default-src 'none'"));
  const std::string meta_json = Between(*page, "id=\"profcpu-meta\">", "</script>");
  EXPECT_THAT(meta_json, HasSubstr("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
  EXPECT_THAT(meta_json, HasSubstr("pid 1 \xef\xbf\xbd"));  // U+FFFD for the cut sequence
  // The name reaches the page as folding names it (quotes dropped, bad bytes
  // '?', as stackcollapse-perf.pl does), markup intact as text inside base64.
  std::string names;
  for (const PageName& name : data.names) {
    EXPECT_TRUE(IsCleanText(name.text)) << name.text;
    names += name.text + "\n";
  }
  EXPECT_THAT(names, HasSubstr("</script><img src=x onerror=alert`1`>&?? bad"));
}

TEST(ProfilePageTest, DataIsDeflatedBase64OfTheEncoding) {
  ProfileMaker maker;
  const uint32_t f = maker.Location(0x1000, false, "/app", {{"spin"}});
  for (int i = 0; i < 5000; ++i) {
    maker.Sample("app", 1, 1, 0, kStart + i * 1'001'000ull, 1, "cpu-clock", {f});
  }
  PageDataOptions options;
  options.start_ns = kStart;
  const PageData data = BuildPageData(maker.profile(), options);
  const auto page = RenderProfilePage(data, {});
  ASSERT_TRUE(page.ok()) << page.status();
  const std::string raw = EncodePageData(data);
  EXPECT_THAT(*page, HasSubstr("data-encoding=\"deflate\" data-bytes=\"" +
                                   std::to_string(raw.size()) + "\""));
  std::string compressed;
  ASSERT_TRUE(absl::Base64Unescape(Between(*page, "data-bytes=\"" + std::to_string(raw.size()) +
                                                      "\">", "</script>"),
                                   &compressed));
  EXPECT_EQ(Inflate(compressed, raw.size()), raw);
  // Evenly spaced samples of one stack cost next to nothing.
  EXPECT_LT(compressed.size() * 4 / 3, 5000u);
}

// The distinct stacks sorted on several threads make the same tree, numbered
// the same.
TEST(ProfilePageTest, SortedOnSeveralThreadsTheDataIsTheSame) {
  ProfileMaker maker;
  std::vector<uint32_t> locations;
  for (int i = 0; i < 40; ++i) {
    locations.push_back(maker.Location(0x1000 + i * 16, false, "/app", {{"f" + std::to_string(i)}}));
  }
  uint32_t state = 3;
  for (int i = 0; i < 60000; ++i) {
    std::vector<uint32_t> stack;
    for (int depth = 0; depth < 4 + i % 9; ++depth) {
      state = state * 1103515245u + 12345u;
      stack.push_back(locations[(state >> 16) % locations.size()]);
    }
    maker.Sample("app", 1, 1 + i % 3, 0, kStart + (60000 - i) * 1000ull, 1, "cpu-clock", stack);
  }
  PageDataOptions one, four;
  one.start_ns = four.start_ns = kStart;
  four.threads = 4;
  const PageData a = BuildPageData(maker.profile(), one);
  const PageData b = BuildPageData(maker.profile(), four);
  ASSERT_GT(a.nodes.size(), 60000u);
  EXPECT_EQ(EncodePageData(a), EncodePageData(b));
}

// A page data larger than a compression piece (2 MiB): a deep tree of
// distinct stacks, as busy_stacks makes.
PageData DeepData() {
  PageData data;
  for (int i = 0; i < 60; ++i) data.names.push_back({"frame_" + std::to_string(i), {1, 2, 3}, {4, 5, 6}, 0});
  data.nodes.push_back({});
  uint32_t state = 7;
  for (uint32_t i = 1; i < 700000; ++i) {
    state = state * 1103515245u + 12345u;
    const uint32_t parent = (state >> 8) % 8 == 0 ? (state >> 12) % i : i - 1;
    data.nodes.push_back({parent, (state >> 16) % 60});
  }
  data.threads.push_back({1, 1, 0});
  for (uint64_t i = 0; i < 100000; ++i) {
    state = state * 1103515245u + 12345u;
    data.samples.push_back({i * 200, 1 + (state >> 8) % 699999, 0, 1});
  }
  data.total_weight = data.samples.size();
  data.last_time_us = data.samples.back().time_us;
  return data;
}

// The data element's bytes after base64 and inflate.
std::string DecodedElement(const std::string& page, const std::string& id, size_t raw_size) {
  const std::string open = "id=\"" + id + "\" data-encoding=\"deflate\" data-bytes=\"" +
                           std::to_string(raw_size) + "\">";
  EXPECT_THAT(page, HasSubstr(open));
  std::string compressed;
  EXPECT_TRUE(absl::Base64Unescape(Between(page, open, "</script>"), &compressed));
  return Inflate(compressed, raw_size);
}

// The pieces compressed on several threads (libdeflate) and the old path
// (zlib on one thread) inflate to the same data, the encoding's.
TEST(ProfilePageTest, CompressedOnSeveralThreadsTheDataIsTheSame) {
  PageData data = DeepData();
  PageView view;
  view.key = "alloc";
  view.label = "Allocations";
  view.count_name = "bytes";
  view.data = DeepData();
  view.data.samples.resize(50000);
  const std::string raw = EncodePageData(data), view_raw = EncodePageData(view.data);
  ASSERT_GT(raw.size(), archive::kDeflatePieceBytes);
  PageWriteWork one_work, many_work;
  const auto one = RenderProfilePage(data, {}, {view}, {1}, &one_work);
  const auto many = RenderProfilePage(data, {}, {view}, {3}, &many_work);
  ASSERT_TRUE(one.ok() && many.ok());
  EXPECT_EQ(DecodedElement(*one, "profcpu-data", raw.size()), raw);
  EXPECT_EQ(DecodedElement(*many, "profcpu-data", raw.size()), raw);
  EXPECT_EQ(DecodedElement(*one, "profcpu-data-alloc", view_raw.size()), view_raw);
  EXPECT_EQ(DecodedElement(*many, "profcpu-data-alloc", view_raw.size()), view_raw);
  EXPECT_EQ(one_work.deflate.tasks, 2u);  // an element each
  EXPECT_EQ(many_work.deflate.tasks, (raw.size() + archive::kDeflatePieceBytes - 1) /
                                             archive::kDeflatePieceBytes +
                                         (view_raw.size() + archive::kDeflatePieceBytes - 1) /
                                             archive::kDeflatePieceBytes);
  EXPECT_EQ(many_work.deflate.threads, 2u);  // no more threads than pieces
  // What is not data is the same page.
  EXPECT_EQ(Between(*one, "<!doctype", "<script type=\"application/octet-stream\""),
            Between(*many, "<!doctype", "<script type=\"application/octet-stream\""));
  EXPECT_LE(many->size(), one->size());
}

// The nodes are held as names with a parent only where it is not the node
// before: what goes in comes out, by index and in order.
TEST(PageNodesTest, ParentsAsPushed) {
  const std::vector<PageNode> pushed = {{0, 0}, {0, 5}, {1, 6}, {2, 7}, {1, 8}, {0, 9}, {5, 1}, {3, 2}};
  PageNodes nodes;
  for (const PageNode& node : pushed) nodes.push_back(node);
  ASSERT_EQ(nodes.size(), pushed.size());
  std::vector<std::pair<uint32_t, uint32_t>> walked;
  nodes.ForEach([&](size_t i, const PageNode& node) {
    EXPECT_EQ(walked.size(), i);
    walked.emplace_back(node.parent, node.name);
  });
  for (size_t i = 0; i < pushed.size(); ++i) {
    EXPECT_EQ(nodes[i].parent, pushed[i].parent) << i;
    EXPECT_EQ(nodes[i].name, pushed[i].name) << i;
    EXPECT_EQ(walked[i], std::make_pair(pushed[i].parent, pushed[i].name)) << i;
  }
  // Built from names and jumps, as BuildPageData does: the root's parent
  // is 0 without a jump.
  PageNameIds ids;
  for (uint32_t name : {0, 5, 6, 7}) ids.push_back(name);
  const PageNodes built(std::move(ids), {{3, 1}});
  EXPECT_EQ(built[0].parent, 0u);
  EXPECT_EQ(built[2].parent, 1u);
  EXPECT_EQ(built[3].parent, 1u);
  EXPECT_EQ(built[3].name, 7u);
}

// Name ids are held in 2 bytes until one needs more.
TEST(PageNodesTest, NameIdsWidenWhenOneNeedsIt) {
  PageNameIds narrow, wide(true);
  for (uint32_t name : {7u, 65535u, 65536u, 4000000000u}) narrow.push_back(name);
  wide.Append(narrow, 1, 4);
  PageNameIds copied;
  copied.Append(narrow, 0, 2);
  copied.Append(wide, 1, 3);
  EXPECT_EQ(std::vector<uint32_t>({narrow[0], narrow[1], narrow[2], narrow[3]}),
            std::vector<uint32_t>({7, 65535, 65536, 4000000000u}));
  ASSERT_EQ(copied.size(), 4u);
  EXPECT_EQ(std::vector<uint32_t>({copied[0], copied[1], copied[2], copied[3]}),
            std::vector<uint32_t>({7, 65535, 65536, 4000000000u}));
}

// postprocess writes the page as it makes it, the data released on the
// way: the file is the document RenderProfilePage makes, byte for byte.
TEST(ProfilePageTest, WrittenToAFileThePageIsTheSame) {
  PageView view;
  view.key = "alloc";
  view.label = "Allocations";
  view.data = DeepData();
  view.data.samples.resize(1000);
  PageMeta meta;
  meta.title = "deep";
  for (size_t threads : {1, 3}) {
    for (bool deep : {true, false}) {
      PageData data = DeepData();
      if (!deep) data.samples.resize(10);
      const auto page = RenderProfilePage(data, meta, {view}, {threads});
      ASSERT_TRUE(page.ok()) << page.status();
      const std::string path = ::testing::TempDir() + "/profile_page_test.html";
      PageWriteWork work;
      const absl::Status written =
          WriteProfilePageFile(std::move(data), meta, {view}, {threads}, path, &work);
      ASSERT_TRUE(written.ok()) << written;
      const absl::StatusOr<std::string> file = base::ReadFileBounded(path, size_t{1} << 30);
      ASSERT_TRUE(file.ok()) << file.status();
      EXPECT_TRUE(*file == *page) << threads << " threads, deep " << deep;
      EXPECT_GE(work.deflate.tasks, 2u);
    }
  }
}

TEST(ProfilePageTest, AnEmptyProfileStillMakesAPage) {
  const auto page = RenderProfilePage(BuildPageData(fold::Profile(), {}), {});
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(*page, HasSubstr("\"samples\":0"));
  EXPECT_THAT(*page, HasSubstr("\"events\":[]"));
}

// The .NET event profiles ride along as views: META.profiles lists the CPU
// profile first, then each view with its unit and its data element's id; the
// main data element is unchanged (older readers see the CPU profile alone).
TEST(ProfilePageTest, ViewsGetDataElementsOfTheirOwnListedInMeta) {
  ProfileMaker cpu;
  const uint32_t spin = cpu.Location(0x1000, false, "/app", {{"spin"}});
  cpu.Sample("app", 1, 1, 0, kStart, 1, "cpu-clock", {spin});
  ProfileMaker alloc;
  const uint32_t site = alloc.Location(0x2000, false, "/app", {{"Allocate"}});
  const uint32_t type = alloc.Location(0x3000, false, "[dotnet]", {{"System.Byte[]"}});
  alloc.Sample("app", 1, 1, 0, kStart + 2'000'000, 300'000, "", {type, site});
  alloc.Sample("app", 1, 1, 0, kStart + 1'000'000, 100'000, "", {type, site});

  PageDataOptions options;
  options.start_ns = kStart;
  const PageData cpu_data = BuildPageData(cpu.profile(), options);
  options.fold.weight_by_period = true;
  PageView view;
  view.key = "alloc";
  view.label = "Allocations";
  view.count_name = "bytes";
  view.description = "bytes <allocated>";
  view.data = BuildPageData(alloc.profile(), options);
  PageMeta meta;
  meta.mode = "cpu";
  const auto page = RenderProfilePage(cpu_data, meta, {view});
  ASSERT_TRUE(page.ok()) << page.status();

  const std::string meta_json = Between(*page, "id=\"profcpu-meta\">", "</script>");
  EXPECT_THAT(meta_json,
              HasSubstr("\"profiles\":[{\"count_name\":\"samples\",\"data\":\"profcpu-data\","
                        "\"key\":\"cpu\",\"label\":\"CPU\",\"samples\":1,\"total_weight\":1},"
                        "{\"count_name\":\"bytes\",\"data\":\"profcpu-data-alloc\","
                        "\"description\":\"bytes \\u003callocated\\u003e\",\"key\":\"alloc\","
                        "\"label\":\"Allocations\",\"samples\":2,\"time_resolution_s\":0,"
                        "\"total_weight\":400000}]"));
  // The CPU data where it always was; the view's after it, same encoding.
  const std::string cpu_raw = EncodePageData(cpu_data);
  EXPECT_THAT(*page, HasSubstr("id=\"profcpu-data\" data-encoding=\"none\" data-bytes=\"" +
                               std::to_string(cpu_raw.size()) + "\">" +
                               absl::Base64Escape(cpu_raw) + "</script>"));
  const std::string raw = EncodePageData(view.data);
  std::string element = Between(*page, "id=\"profcpu-data-alloc\" data-encoding=\"", "</script>");
  ASSERT_FALSE(element.empty());
  std::string bytes;
  ASSERT_TRUE(absl::Base64Unescape(element.substr(element.find("\">") + 2), &bytes));
  if (absl::StartsWith(element, "deflate")) bytes = Inflate(bytes, raw.size());
  const Decoded d = Decode(bytes);
  EXPECT_THAT(d.times, ElementsAre(1000, 2000));
  EXPECT_THAT(d.weights, ElementsAre(100'000, 300'000));
  EXPECT_EQ(d.Path(d.leaves[0]), "app;Allocate;System.Byte[]");
}

TEST(ProfilePageTest, ViewKeysMustBePlainWords) {
  const PageData data = BuildPageData(fold::Profile(), {});
  for (const char* key : {"", "cpu", "a-b", "x\"><script>", "Alloc"}) {
    PageView view;
    view.key = key;
    EXPECT_FALSE(RenderProfilePage(data, {}, {view}).ok()) << key;
  }
  // Without views, META has no profiles: the page offers no switch.
  const auto page = RenderProfilePage(data, {});
  ASSERT_TRUE(page.ok());
  EXPECT_THAT(*page, Not(HasSubstr("\"profiles\":[")));
}

}  // namespace
}  // namespace profcpu::render
