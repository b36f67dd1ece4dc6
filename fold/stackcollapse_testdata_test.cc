// Compares the folder with stackcollapse-perf.pl (FlameGraph commit 41fee1f)
// byte for byte: for every input/NAME.txt and every expected/NAME.OPTION.folded
// the script produced from it.
#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "base/file_io.h"
#include "fold/stackcollapse.h"
#include "gtest/gtest.h"

#ifndef PROFCPU_STACKCOLLAPSE_TESTDATA
#define PROFCPU_STACKCOLLAPSE_TESTDATA "/work/shared/testdata/stackcollapse-perf"
#endif

namespace profcpu::fold {
namespace {

constexpr size_t kMaxFileBytes = size_t{256} << 20;

std::vector<std::string> ListDirectory(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return names;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// The option a file name's middle part stands for; false if unknown.
bool OptionsFor(absl::string_view option, StackCollapseOptions* options) {
  *options = StackCollapseOptions();
  if (option == "default") return true;
  if (option == "pid") return options->include_pid = true;
  if (option == "tid") return options->include_tid = true;
  if (option == "kernel") return options->annotate_kernel = true;
  if (option == "jit") return options->annotate_jit = true;
  if (option == "all") return options->annotate_kernel = options->annotate_jit = true;
  if (option == "addrs") return options->include_addrs = true;
  return false;
}

// Names the first differing line, which a plain EXPECT_EQ on megabytes hides.
std::string FirstDifference(absl::string_view got, absl::string_view want) {
  size_t at = 0;
  while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
  size_t line_start = want.rfind('\n', at == 0 ? 0 : at - 1);
  line_start = line_start == absl::string_view::npos ? 0 : line_start + 1;
  auto line_at = [line_start](absl::string_view text) {
    if (line_start >= text.size()) return absl::string_view("<end>");
    absl::string_view rest = text.substr(line_start);
    return rest.substr(0, rest.find('\n'));
  };
  return absl::StrCat("first difference at byte ", at, "\n  got:  ", line_at(got),
                      "\n  want: ", line_at(want));
}

TEST(StackCollapseTestdataTest, MatchesScriptOutputForEveryInputAndOption) {
  const std::string root = PROFCPU_STACKCOLLAPSE_TESTDATA;
  const std::vector<std::string> inputs = ListDirectory(root + "/input");
  const std::vector<std::string> expected = ListDirectory(root + "/expected");
  // A missing directory must fail, not pass vacuously.
  ASSERT_FALSE(inputs.empty()) << "no inputs in " << root << "/input";
  ASSERT_FALSE(expected.empty()) << "no expected outputs in " << root << "/expected";

  int compared = 0;
  std::vector<std::string> inputs_without_expectations;
  for (const std::string& input : inputs) {
    ASSERT_TRUE(absl::EndsWith(input, ".txt")) << "unexpected input file " << input;
    const std::string name = input.substr(0, input.size() - 4);
    absl::StatusOr<std::string> text =
        base::ReadFileBounded(root + "/input/" + input, kMaxFileBytes);
    ASSERT_TRUE(text.ok()) << text.status();

    int for_this_input = 0;
    for (const std::string& file : expected) {
      absl::string_view rest = file;
      if (!absl::ConsumePrefix(&rest, name + ".") || !absl::ConsumeSuffix(&rest, ".folded")) {
        continue;
      }
      if (absl::StrContains(rest, '.')) continue;  // another input's name prefix
      StackCollapseOptions options;
      ASSERT_TRUE(OptionsFor(rest, &options)) << "unknown option in " << file;
      absl::StatusOr<std::string> want =
          base::ReadFileBounded(root + "/expected/" + file, kMaxFileBytes);
      ASSERT_TRUE(want.ok()) << want.status();

      std::string got = CollapsePerfScriptText(*text, options);
      EXPECT_TRUE(got == *want) << file << ": " << FirstDifference(got, *want);
      ++compared;
      ++for_this_input;
    }
    if (for_this_input == 0) inputs_without_expectations.push_back(input);
  }
  EXPECT_TRUE(inputs_without_expectations.empty())
      << "inputs with no expected output, e.g. " << inputs_without_expectations.front();
  // Every expected file must belong to some input.
  EXPECT_EQ(compared, static_cast<int>(expected.size()));
  std::printf("compared %d outputs of %zu inputs\n", compared, inputs.size());
}

}  // namespace
}  // namespace profcpu::fold
