#include "strata/tooling/flags.h"

#include <gtest/gtest.h>

namespace strata::tooling {
namespace {

Status ParseArgs(FlagParser &parser, std::vector<std::string> args,
                 std::vector<std::string> *positional) {
  std::vector<char *> argv = {const_cast<char *>("tool")};
  for (std::string &arg : args)
    argv.push_back(arg.data());
  return parser.Parse(int(argv.size()), argv.data(), positional);
}

TEST(FlagsTest, ParsesEveryForm) {
  std::string name;
  std::vector<std::string> list;
  int64_t count = 0;
  double ratio = 0;
  bool verbose = false;
  FlagParser parser("tool", "[flags]");
  parser.AddString("name", &name, "a name");
  parser.AddStringList("item", &list, "items");
  parser.AddInt("count", &count, "a count");
  parser.AddDouble("ratio", &ratio, "a ratio");
  parser.AddBool("verbose", &verbose, "talk");
  std::vector<std::string> positional;
  ASSERT_TRUE(ParseArgs(parser,
                        {"--name=x", "--item", "a", "--item=b", "--count=-3",
                         "--ratio=0.5", "--verbose", "file"},
                        &positional)
                  .ok());
  EXPECT_EQ(name, "x");
  EXPECT_EQ(list, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(count, -3);
  EXPECT_EQ(ratio, 0.5);
  EXPECT_TRUE(verbose);
  EXPECT_EQ(positional, std::vector<std::string>{"file"});
  EXPECT_NE(parser.Help().find("--ratio"), std::string::npos);
}

TEST(FlagsTest, ErrorsNameTheFlag) {
  int64_t count = 0;
  FlagParser parser("tool", "");
  parser.AddInt("count", &count, "a count");
  std::vector<std::string> positional;
  Status status = ParseArgs(parser, {"--bogus=1"}, &positional);
  EXPECT_NE(status.message().find("unknown flag '--bogus=1'"),
            std::string::npos);
  status = ParseArgs(parser, {"--count=abc"}, &positional);
  EXPECT_NE(status.message().find("--count expects an integer"),
            std::string::npos);
  status = ParseArgs(parser, {"--count"}, &positional);
  EXPECT_NE(status.message().find("needs a value"), std::string::npos);
}

} // namespace
} // namespace strata::tooling
