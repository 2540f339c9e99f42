// sha1_hex_memo: the digest every simulated server names its scripts by, remembered across
// servers. It must answer exactly sha1_hex's digest: for a known test vector, for a text asked
// again, and for texts past the memo's size (no longer remembered, still right), also from two
// campaign threads at once.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "seqby/sim/sha1.h"

namespace seqby::sim {
namespace {

TEST(Sha1Memo, AnswersTheDigestOfSha1HexAskedOnceAgainOrPastItsSize) {
  // FIPS 180-2 appendix A.1.
  EXPECT_EQ(sha1_hex_memo("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_hex_memo("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_hex_memo(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  for (std::size_t i = 0; i < kSha1MemoSizeMax + 100; ++i) {
    const std::string text = "return " + std::to_string(i) + std::string(i % 200, ' ');
    ASSERT_EQ(sha1_hex_memo(text), sha1_hex(text)) << text;
  }
}

TEST(Sha1Memo, TwoThreadsAskingTheSameTextsGetTheSameDigests) {
  std::vector<std::string> texts;
  for (int i = 0; i < 64; ++i)
    texts.push_back("redis.call('GET', KEYS[" + std::to_string(i) + "])");
  std::vector<std::string> first(texts.size());
  std::vector<std::string> second(texts.size());
  std::thread a([&] {
    for (std::size_t i = 0; i < texts.size(); ++i) first[i] = sha1_hex_memo(texts[i]);
  });
  std::thread b([&] {
    for (std::size_t i = texts.size(); i-- > 0;) second[i] = sha1_hex_memo(texts[i]);
  });
  a.join();
  b.join();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(first[i], sha1_hex(texts[i]));
    EXPECT_EQ(second[i], first[i]);
  }
}

}  // namespace
}  // namespace seqby::sim
