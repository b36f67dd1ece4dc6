#include "base/curl_library.h"

#include "gtest/gtest.h"

namespace profcpu::base {
namespace {

TEST(CurlLibraryTest, LoadsOnceAndStartsATransfer) {
  absl::StatusOr<const CurlApi*> curl = Curl();
  ASSERT_TRUE(curl.ok()) << curl.status();
  absl::StatusOr<const CurlApi*> again = Curl();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*curl, *again);  // one table for the process
  CURL* handle = (*curl)->easy_init();
  ASSERT_NE(handle, nullptr);
  EXPECT_STREQ((*curl)->easy_strerror(CURLE_COULDNT_CONNECT), "Couldn't connect to server");
  curl_slist* headers = (*curl)->slist_append(nullptr, "Content-Encoding: gzip");
  ASSERT_NE(headers, nullptr);
  EXPECT_STREQ(headers->data, "Content-Encoding: gzip");
  (*curl)->slist_free_all(headers);
  (*curl)->easy_cleanup(handle);
}

}  // namespace
}  // namespace profcpu::base
