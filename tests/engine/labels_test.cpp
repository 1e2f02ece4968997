#include "kingman/data/labels.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "kingman/error.hpp"

namespace kingman {
namespace {

using Indices = std::vector<std::size_t>;
using Strings = std::vector<std::string>;

// A folder under the system temp dir, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::random_device seed;
    path_ = std::filesystem::temp_directory_path() /
            ("kingman-labels-test-" + std::to_string(seed()) + std::to_string(seed()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string write(const std::string& name, const std::string& content) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream(file, std::ios::binary) << content;
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

std::string input_error(const std::string& path, std::size_t expected_rows) {
  try {
    read_labels(path, expected_rows);
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError reading " << path;
  return {};
}

TEST(Labels, FromStringsNumbersClassesInOrderOfFirstAppearance) {
  const Labels labels = labels_from_strings({"dog", "cat", "dog", "bird", "cat"});
  EXPECT_EQ(labels.names, (Strings{"dog", "cat", "bird"}));
  EXPECT_EQ(labels.class_of, (Indices{0, 1, 0, 2, 1}));
}

TEST(Labels, FromStringsOfNothingIsEmpty) {
  const Labels labels = labels_from_strings({});
  EXPECT_TRUE(labels.names.empty());
  EXPECT_TRUE(labels.class_of.empty());
}

TEST(Labels, ReadsOneLabelPerLine) {
  TempDir dir;
  const Labels labels = read_labels(dir.write("labels.txt", "a\nb\na\nc"), 4);
  EXPECT_EQ(labels.names, (Strings{"a", "b", "c"}));
  EXPECT_EQ(labels.class_of, (Indices{0, 1, 0, 2}));
}

TEST(Labels, TrimsBlanksCarriageReturnsAndByteOrderMark) {
  TempDir dir;
  const std::string path =
      dir.write("labels.txt", "\xEF\xBB\xBF  setosa \r\nvirginica\t\r\nsetosa\r\n");
  const Labels labels = read_labels(path, 3);
  EXPECT_EQ(labels.names, (Strings{"setosa", "virginica"}));
  EXPECT_EQ(labels.class_of, (Indices{0, 1, 0}));
}

TEST(Labels, LabelsMayContainInnerBlanks) {
  TempDir dir;
  const Labels labels = read_labels(dir.write("labels.txt", "class one\nclass two\n"), 2);
  EXPECT_EQ(labels.names, (Strings{"class one", "class two"}));
}

TEST(Labels, IgnoresTrailingBlankLines) {
  TempDir dir;
  const Labels labels = read_labels(dir.write("labels.txt", "x\ny\n\n \r\n\n"), 2);
  EXPECT_EQ(labels.class_of, (Indices{0, 1}));
}

TEST(Labels, CountMismatchNamesBothCounts) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 199; ++i) {
    text.push_back('c');  // push_back: GCC 12 warns falsely (-Wrestrict) on "c" + string
    text += std::to_string(i % 3);
    text.push_back('\n');
  }
  const std::string path = dir.write("labels.txt", text);
  EXPECT_EQ(input_error(path, 200), path + " has 199 labels but the data has 200 rows");
  EXPECT_EQ(input_error(path, 198), path + " has 199 labels but the data has 198 rows");
  EXPECT_NO_THROW(read_labels(path, 199));
}

TEST(Labels, InteriorEmptyLineIsAnError) {
  TempDir dir;
  const std::string path = dir.write("labels.txt", "a\nb\n\nc\n");
  const std::string message = input_error(path, 4);
  EXPECT_NE(message.find(path + ", line 3: empty label"), std::string::npos) << message;
}

TEST(Labels, LeadingEmptyLineIsAnError) {
  TempDir dir;
  const std::string path = dir.write("labels.txt", "\na\nb\n");
  EXPECT_NE(input_error(path, 2).find("line 1: empty label"), std::string::npos);
}

TEST(Labels, EmptyFileHasNoLabels) {
  TempDir dir;
  const std::string path = dir.write("labels.txt", "");
  EXPECT_EQ(input_error(path, 3), path + " has 0 labels but the data has 3 rows");
}

TEST(Labels, MissingFileIsAnInputError) {
  TempDir dir;
  const std::string path = dir.write("labels.txt", "a\n") + ".absent";
  const std::string message = input_error(path, 1);
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
}

}  // namespace
}  // namespace kingman
