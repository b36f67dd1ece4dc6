// Helpers shared by the renderer's tests: building profiles, rendering, and
// reading back the frames this renderer writes.
#ifndef PROFCPU_RENDER_FLAMEGRAPH_TEST_UTIL_H_
#define PROFCPU_RENDER_FLAMEGRAPH_TEST_UTIL_H_

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "render/flamegraph.h"

namespace profcpu::render::testing_util {

inline fold::FoldedProfile Profile(
    const std::vector<std::pair<std::string, uint64_t>>& lines) {
  fold::FoldedProfile profile;
  for (const auto& [stack, count] : lines) {
    std::vector<absl::string_view> frames = absl::StrSplit(stack, ';');
    profile.AddStack(frames, count);
  }
  return profile;
}

inline std::string Render(const fold::FoldedProfile& profile,
                          const FlameGraphOptions& options = {}) {
  absl::StatusOr<std::string> svg = RenderFlameGraph(profile, options);
  EXPECT_TRUE(svg.ok()) << svg.status();
  return svg.ok() ? *std::move(svg) : "";
}

struct Frame {
  std::string title;
  std::string label;
  std::string fill;
  double x = 0, y = 0, width = 0;
};

inline std::string Unescape(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""},
                                    {"&#39;", "'"}, {"&amp;", "&"}});
}

// Text between `open` and the next `close` after *pos; advances *pos.
inline std::string Between(absl::string_view text, absl::string_view open,
                           absl::string_view close, size_t* pos) {
  const size_t start = text.find(open, *pos);
  if (start == absl::string_view::npos) return "";
  const size_t from = start + open.size();
  const size_t end = text.find(close, from);
  *pos = end;
  return std::string(text.substr(from, end - from));
}

inline double Number(const std::string& text) {
  double value = -1;
  EXPECT_TRUE(absl::SimpleAtod(text, &value)) << text;
  return value;
}

// Parses the frames this renderer writes (one <g> per line in #frames).
inline std::vector<Frame> ParseFrames(absl::string_view svg) {
  std::vector<Frame> frames;
  const size_t group = svg.find("<g id=\"frames\"");
  if (group == absl::string_view::npos) return frames;
  for (absl::string_view line : absl::StrSplit(svg.substr(group), '\n')) {
    if (!absl::StartsWith(line, "<g><title>")) continue;
    Frame frame;
    size_t pos = 0;
    frame.title = Unescape(Between(line, "<title>", "</title>", &pos));
    frame.x = Number(Between(line, "<rect x=\"", "\"", &pos));
    frame.y = Number(Between(line, " y=\"", "\"", &pos));
    frame.width = Number(Between(line, " width=\"", "\"", &pos));
    frame.fill = Between(line, " fill=\"", "\"", &pos);
    frame.label = Unescape(Between(line, "\">", "</text>", &pos));
    frames.push_back(frame);
  }
  return frames;
}

// Frames whose title starts with "NAME (".
inline std::vector<Frame> Named(const std::vector<Frame>& frames, absl::string_view name) {
  std::vector<Frame> out;
  for (const Frame& frame : frames) {
    if (absl::StartsWith(frame.title, absl::StrCat(name, " ("))) out.push_back(frame);
  }
  return out;
}

inline Frame Only(const std::vector<Frame>& frames, absl::string_view name) {
  const std::vector<Frame> found = Named(frames, name);
  EXPECT_EQ(found.size(), 1u) << name;
  return found.empty() ? Frame{} : found[0];
}

// Well-formedness by libxml2's own parser. A missing xmllint fails the test:
// install Debian's libxml2-utils.
inline void ExpectWellFormedXml(const std::string& svg) {
  ASSERT_EQ(std::system("command -v xmllint >/dev/null 2>&1"), 0)
      << "xmllint is required by this test: apt-get install -y libxml2-utils";
  const std::string path = testing::TempDir() + "/render_test.svg";
  const std::string log = testing::TempDir() + "/render_test.xmllint";
  {
    std::ofstream file(path, std::ios::binary);
    file << svg;
  }
  const int status =
      std::system(absl::StrCat("xmllint --noout --nonet '", path, "' >'", log, "' 2>&1").c_str());
  std::ifstream errors(log);
  const std::string messages((std::istreambuf_iterator<char>(errors)),
                             std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 0) << messages;
  EXPECT_EQ(messages, "");
}

}  // namespace profcpu::render::testing_util

#endif  // PROFCPU_RENDER_FLAMEGRAPH_TEST_UTIL_H_
