#include "fleet/agent/spool_file.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

using ::testing::HasSubstr;

TEST(SpoolFileTest, RoundTrip) {
  const std::string payload = "rows of window 7\n\0binary"  // NUL kept
                              "tail";
  const std::string bytes = EncodeSpoolFile(7, 1234, payload);
  ASSERT_EQ(bytes.size(), kSpoolHeaderSize + payload.size());
  auto contents = ParseSpoolFile(bytes);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->header.window_id, 7u);
  EXPECT_EQ(contents->header.samples, 1234u);
  EXPECT_EQ(contents->payload, payload);
  EXPECT_TRUE(ParseSpoolFile(EncodeSpoolFile(1, 0, "")).ok());
}

TEST(SpoolFileTest, EveryDamageIsDetected) {
  const std::string good = EncodeSpoolFile(9, 50, "some payload bytes");
  // Any single flipped bit, anywhere, is caught by one checksum or the other.
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    EXPECT_FALSE(ParseSpoolFile(bad).ok()) << "byte " << i;
  }
  // Cut anywhere.
  for (size_t n = 0; n < good.size(); ++n) {
    auto parsed = ParseSpoolFile(good.substr(0, n));
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss) << n;
  }
  EXPECT_THAT(ParseSpoolFile(good.substr(0, good.size() - 3)).status().message(),
              HasSubstr("truncated"));
  EXPECT_THAT(ParseSpoolFile(good + "x").status().message(), HasSubstr("after the payload"));
  EXPECT_THAT(ParseSpoolFile("garbage that is long enough to be a header, or so it seems")
                  .status()
                  .message(),
              HasSubstr("bad magic"));
}

TEST(SpoolFileTest, HeaderAloneSaysWhatIsLost) {
  const std::string bytes = EncodeSpoolFile(3, 77, std::string(1000, 'p'));
  auto header = ParseSpoolHeader(bytes.substr(0, kSpoolHeaderSize));
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->window_id, 3u);
  EXPECT_EQ(header->samples, 77u);
  EXPECT_EQ(header->payload_size, 1000u);
}

}  // namespace
}  // namespace profcpu::fleet
