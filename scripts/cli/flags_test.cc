#include "scripts/cli/flags.h"

#include "gtest/gtest.h"

namespace profcpu::cli {
namespace {

FlagSet MakeFlags() {
  FlagSet flags("collect", "profcpu collect", "test");
  flags.Add("pid", "PID", "", "target");
  flags.Add("duration", "SEC", "30", "how long");
  flags.Add("a", "", "", "all");
  return flags;
}

TEST(FlagsTest, AcceptsSingleAndDoubleDashAndEquals) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-pid", "42"}, {"--pid", "42"}, {"-pid=42"}, {"--pid=42"}}) {
    FlagSet flags = MakeFlags();
    ASSERT_TRUE(flags.Parse(args).ok());
    int64_t pid;
    ASSERT_TRUE(flags.Int("pid", 1, 100, &pid).ok());
    EXPECT_EQ(pid, 42);
    EXPECT_TRUE(flags.IsSet("pid"));
  }
}

TEST(FlagsTest, DefaultsBooleansAndPositionals) {
  FlagSet flags = MakeFlags();
  ASSERT_TRUE(flags.Parse({"-a", "extra", "--", "-pid", "x"}).ok());
  EXPECT_TRUE(flags.Bool("a"));
  EXPECT_FALSE(flags.IsSet("duration"));
  EXPECT_EQ(flags.String("duration"), "30");
  EXPECT_EQ(flags.positionals(), (std::vector<std::string>{"extra", "-pid", "x"}));
}

TEST(FlagsTest, StopAtFirstPositionalKeepsTheCommandsFlags) {
  FlagSet flags = MakeFlags();
  flags.StopAtFirstPositional();
  ASSERT_TRUE(flags.Parse({"-duration", "5", "ls", "-l", "-pid"}).ok());
  EXPECT_EQ(flags.positionals(), (std::vector<std::string>{"ls", "-l", "-pid"}));
  EXPECT_EQ(flags.String("duration"), "5");
}

TEST(FlagsTest, ErrorsNameTheProblem) {
  FlagSet flags = MakeFlags();
  absl::Status unknown = flags.Parse({"-pdi", "1"});
  EXPECT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("-pdi"), absl::string_view::npos);

  FlagSet missing = MakeFlags();
  EXPECT_FALSE(missing.Parse({"-pid"}).ok());

  FlagSet bad = MakeFlags();
  ASSERT_TRUE(bad.Parse({"-pid", "abc"}).ok());
  int64_t pid;
  absl::Status s = bad.Int("pid", 1, 100, &pid);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("abc"), absl::string_view::npos);

  double seconds;
  FlagSet negative = MakeFlags();
  ASSERT_TRUE(negative.Parse({"-duration", "-3"}).ok());
  EXPECT_FALSE(negative.Seconds("duration", &seconds).ok());
}

TEST(FlagsTest, RepeatedFlagKeepsEveryValueInOrder) {
  FlagSet flags = MakeFlags();
  ASSERT_TRUE(flags.Parse({"-pid", "a", "--pid=b", "-pid", "c"}).ok());
  EXPECT_EQ(flags.Strings("pid"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(flags.String("pid"), "c");
  FlagSet unset = MakeFlags();
  ASSERT_TRUE(unset.Parse({}).ok());
  EXPECT_TRUE(unset.Strings("duration").empty());  // the default is not a given value
}

TEST(FlagsTest, HelpAndUsageListEveryFlag) {
  FlagSet flags = MakeFlags();
  ASSERT_TRUE(flags.Parse({"--help"}).ok());
  EXPECT_TRUE(flags.help_requested());
  std::string usage = flags.Usage();
  EXPECT_NE(usage.find("-pid PID"), std::string::npos);
  EXPECT_NE(usage.find("(default 30)"), std::string::npos);
  EXPECT_NE(usage.find("-a "), std::string::npos);
}

}  // namespace
}  // namespace profcpu::cli
