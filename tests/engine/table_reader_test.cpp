#include "kingman/data/table_reader.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kingman/error.hpp"

namespace kingman {
namespace {

Table read_text(const std::string& text, const TableReadOptions& options = {}) {
  std::istringstream in(text);
  return read_table(in, "data.csv", options);
}

// The message of the InputError that reading `text` throws, or a test failure if none is thrown.
std::string input_error(const std::string& text, const TableReadOptions& options = {}) {
  try {
    read_text(text, options);
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError for input:\n" << text;
  return {};
}

testing::AssertionResult contains(const std::string& message, const std::string& part) {
  if (message.find(part) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "'" << message << "' does not contain '" << part << "'";
}

std::vector<double> row_values(const Table& table, std::size_t row) {
  std::vector<double> values;
  for (std::size_t c = 0; c < table.cols; ++c) values.push_back(table.at(row, c));
  return values;
}

using Strings = std::vector<std::string>;
using Doubles = std::vector<double>;

// A folder under the system temp dir, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::random_device seed;
    path_ = std::filesystem::temp_directory_path() /
            ("kingman-table-test-" + std::to_string(seed()) + std::to_string(seed()));
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

// --- delimiters ---------------------------------------------------------------------------

TEST(TableReader, ReadsCommaSeparatedValues) {
  const Table table = read_text("1,2.5,-3\n4e2,0.125,6\n");
  EXPECT_EQ(table.rows, 2u);
  EXPECT_EQ(table.cols, 3u);
  EXPECT_EQ(row_values(table, 0), (Doubles{1, 2.5, -3}));
  EXPECT_EQ(row_values(table, 1), (Doubles{400, 0.125, 6}));
  EXPECT_TRUE(table.column_names.empty());
  EXPECT_TRUE(table.row_names.empty());
  EXPECT_EQ(table.source, "data.csv");
  EXPECT_FALSE(table.has_missing());
}

TEST(TableReader, ReadsTabSeparatedValues) {
  const Table table = read_text("x\ty\n1\t2\n3\t4\n");
  EXPECT_EQ(table.column_names, (Strings{"x", "y"}));
  EXPECT_EQ(table.rows, 2u);
  EXPECT_EQ(row_values(table, 1), (Doubles{3, 4}));
}

TEST(TableReader, TabWinsOverCommaWhenDetecting) {
  // A tab file whose header names contain commas must not be split on the commas.
  const Table table = read_text("a,b\tc\n1\t2\n3\t4\n");
  EXPECT_EQ(table.column_names, (Strings{"a,b", "c"}));
}

TEST(TableReader, ReadsWhitespaceTablesWithLeadingAndRepeatedBlanks) {
  // No tab on the first line, so blanks separate cells; later tabs count as blanks.
  const Table table = read_text("   1   2.5  3\n\t4  5 \t  6   \n  7 8 9\n");
  EXPECT_EQ(table.rows, 3u);
  EXPECT_EQ(table.cols, 3u);
  EXPECT_EQ(row_values(table, 0), (Doubles{1, 2.5, 3}));
  EXPECT_EQ(row_values(table, 1), (Doubles{4, 5, 6}));
  EXPECT_EQ(row_values(table, 2), (Doubles{7, 8, 9}));
}

TEST(TableReader, DelimiterOptionOverridesDetection) {
  const std::string text = "1\t2 3\n4\t5 6\n";
  // Detected: tab, so "2 3" is one cell and not a number.
  TableReadOptions detected;
  detected.header = HeaderMode::absent;
  EXPECT_TRUE(contains(input_error(text, detected), "row 1, column 2: '2 3' is not a number"));
  TableReadOptions blanks;
  blanks.delimiter = ' ';
  const Table table = read_text(text, blanks);
  EXPECT_EQ(table.cols, 3u);
  EXPECT_EQ(row_values(table, 1), (Doubles{4, 5, 6}));

  TableReadOptions commas;
  commas.delimiter = ',';
  const Table one_column = read_text("1 \n 2\n", commas);
  EXPECT_EQ(one_column.cols, 1u);
  EXPECT_EQ(one_column.rows, 2u);
}

TEST(TableReader, RejectsUnsupportedDelimiterOption) {
  TableReadOptions options;
  options.delimiter = ';';
  EXPECT_THROW(read_text("1;2\n3;4\n", options), OptionError);
}

// --- header and id column -----------------------------------------------------------------

TEST(TableReader, NumericFirstRowIsDataNotHeader) {
  const Table table = read_text("1,2\n3,4\n");
  EXPECT_EQ(table.rows, 2u);
  EXPECT_TRUE(table.column_names.empty());
  EXPECT_EQ(row_values(table, 0), (Doubles{1, 2}));
}

TEST(TableReader, OneTextCellMakesTheFirstRowAHeader) {
  const Table table = read_text("1,b\n3,4\n5,6\n");
  EXPECT_EQ(table.column_names, (Strings{"1", "b"}));
  EXPECT_EQ(table.rows, 2u);
}

TEST(TableReader, MissingMarkersAloneDoNotMakeAHeader) {
  // The first row is data (with missing cells), so the second row is the second point.
  const Table table = read_text("NA,1\n2,3\n");
  EXPECT_TRUE(table.column_names.empty());
  EXPECT_EQ(table.rows, 2u);
  EXPECT_TRUE(table.missing(0, 0));
}

TEST(TableReader, ForcedHeaderTakesNumericNames) {
  TableReadOptions options;
  options.header = HeaderMode::present;
  const Table table = read_text("10,20\n1,2\n3,4\n", options);
  EXPECT_EQ(table.column_names, (Strings{"10", "20"}));
  EXPECT_EQ(table.rows, 2u);
  EXPECT_EQ(row_values(table, 0), (Doubles{1, 2}));
}

TEST(TableReader, ForcedNoHeaderReportsTheTextCell) {
  TableReadOptions options;
  options.header = HeaderMode::absent;
  const std::string message = input_error("x,y\n1,2\n3,4\n", options);
  EXPECT_TRUE(contains(message, "data.csv, row 1, column 1: 'x' is not a number"));
}

TEST(TableReader, DetectsIdColumnWithHeader) {
  const Table table = read_text("id,x,y\na,1,2\nb,3,4\nc,5,6\n");
  EXPECT_EQ(table.row_names, (Strings{"a", "b", "c"}));
  EXPECT_EQ(table.column_names, (Strings{"x", "y"}));
  EXPECT_EQ(table.cols, 2u);
  EXPECT_EQ(row_values(table, 2), (Doubles{5, 6}));
}

TEST(TableReader, DetectsIdColumnWithoutHeader) {
  const Table table = read_text("a 1 2\nb 3 4\n");
  EXPECT_EQ(table.row_names, (Strings{"a", "b"}));
  EXPECT_TRUE(table.column_names.empty());
  EXPECT_EQ(table.rows, 2u);
  EXPECT_EQ(row_values(table, 0), (Doubles{1, 2}));
}

TEST(TableReader, HeaderOfIdColumnMayBeEmpty) {
  // pandas and write.csv write an empty or quoted-empty name over the index column.
  const Table table = read_text("\"\",\"x\",\"y\"\n\"s1\",1,2\n\"s2\",3,4\n");
  EXPECT_EQ(table.row_names, (Strings{"s1", "s2"}));
  EXPECT_EQ(table.column_names, (Strings{"x", "y"}));
}

TEST(TableReader, HeaderOneCellShortMeansIdColumn) {
  // R's write.table: the header names only the data columns.
  const Table table = read_text("\"x\" \"y\"\n\"1\" 0.5 1.5\n\"2\" 2.5 3.5\n");
  EXPECT_EQ(table.column_names, (Strings{"x", "y"}));
  EXPECT_EQ(table.row_names, (Strings{"1", "2"}));
  EXPECT_EQ(row_values(table, 1), (Doubles{2.5, 3.5}));
}

TEST(TableReader, NoIdColumnWhenAnyFirstCellIsNumeric) {
  const std::string message = input_error("x,y\na,1\n2,3\nb,4\n");
  EXPECT_TRUE(contains(message, "data.csv, row 2, column 1: 'a' is not a number"));
}

TEST(TableReader, NoIdColumnWhenItIsTheOnlyColumn) {
  const std::string message = input_error("a\nb\nc\n");
  EXPECT_TRUE(contains(message, "row 2, column 1: 'b' is not a number"));
}

TEST(TableReader, ForcedIdColumnAcceptsNumericIds) {
  TableReadOptions options;
  options.id_column = IdColumnMode::present;
  const Table table = read_text("101,5,6\n102,7,8\n", options);
  EXPECT_EQ(table.row_names, (Strings{"101", "102"}));
  EXPECT_EQ(table.cols, 2u);
  EXPECT_EQ(row_values(table, 0), (Doubles{5, 6}));
}

TEST(TableReader, ForcedIdColumnWithoutDataColumnsIsAnError) {
  TableReadOptions options;
  options.id_column = IdColumnMode::present;
  EXPECT_TRUE(contains(input_error("1\n2\n", options), "no data columns"));
}

TEST(TableReader, ForcedNoIdColumnReportsTheTextCell) {
  TableReadOptions options;
  options.id_column = IdColumnMode::absent;
  const std::string message = input_error("id,x\na,1\nb,2\n", options);
  EXPECT_TRUE(contains(message, "row 2, column 1: 'a' is not a number"));
}

// --- cell syntax --------------------------------------------------------------------------

TEST(TableReader, MissingTokensBecomeNaN) {
  const Table table = read_text("1,,3\nNA,2,nan\nNaN,na,4\n5,6,Na\n7,nAn,  \n");
  ASSERT_EQ(table.rows, 5u);
  const std::vector<std::vector<bool>> expected = {{false, true, false},
                                                   {true, false, true},
                                                   {true, true, false},
                                                   {false, false, true},
                                                   {false, true, true}};
  for (std::size_t r = 0; r < table.rows; ++r) {
    for (std::size_t c = 0; c < table.cols; ++c) {
      EXPECT_EQ(table.missing(r, c), expected[r][c]) << "row " << r << " col " << c;
    }
  }
  EXPECT_TRUE(table.has_missing());
  EXPECT_EQ(table.at(1, 1), 2.0);
}

TEST(TableReader, TrimsBlanksAroundCells) {
  const Table table = read_text(" 1 , 2 \n\t3,4\t\n");
  EXPECT_EQ(row_values(table, 0), (Doubles{1, 2}));
  EXPECT_EQ(row_values(table, 1), (Doubles{3, 4}));
}

TEST(TableReader, ParsesNumberSpellings) {
  const Table table = read_text("+1.5,-2e3,.5\n1E-2,-0.0,1e-999\n");
  EXPECT_EQ(row_values(table, 0), (Doubles{1.5, -2000, 0.5}));
  EXPECT_EQ(table.at(1, 0), 0.01);
  EXPECT_EQ(table.at(1, 1), 0.0);
  EXPECT_EQ(table.at(1, 2), 0.0);  // underflow reads as zero, not as an error
}

TEST(TableReader, RejectsPartiallyNumericCells) {
  EXPECT_TRUE(contains(input_error("1,2\n3,4x\n"), "row 2, column 2: '4x' is not a number"));
  EXPECT_TRUE(contains(input_error("1,2\n3,++4\n"), "'++4' is not a number"));
  EXPECT_TRUE(contains(input_error("1,2\n3,0x10\n"), "'0x10' is not a number"));
}

TEST(TableReader, QuotedCellsMayHoldDelimitersAndQuotes) {
  const Table table = read_text("\"a,b\",\"say \"\"hi\"\"\"\n\"1\",2\n3, \"4\" \n");
  EXPECT_EQ(table.column_names, (Strings{"a,b", "say \"hi\""}));
  EXPECT_EQ(row_values(table, 0), (Doubles{1, 2}));
  EXPECT_EQ(row_values(table, 1), (Doubles{3, 4}));
}

TEST(TableReader, QuotedNamesInWhitespaceTablesMayHoldBlanks) {
  const Table table = read_text("\"first name\" \"second name\"\n1 2\n3 4\n");
  EXPECT_EQ(table.column_names, (Strings{"first name", "second name"}));
}

TEST(TableReader, UnterminatedQuoteIsAnError) {
  const std::string message = input_error("x,y\n1,\"2\n3,4\n");
  EXPECT_TRUE(contains(message, "data.csv, row 2, column 2"));
  EXPECT_TRUE(contains(message, "closing quote"));
}

TEST(TableReader, TextAfterClosingQuoteIsAnError) {
  const std::string message = input_error("x,y\n1,\"2\"3\n3,4\n");
  EXPECT_TRUE(contains(message, "data.csv, row 2, column 2"));
}

// --- line endings and blank lines ---------------------------------------------------------

TEST(TableReader, HandlesCrLfAndByteOrderMark) {
  const Table table = read_text("\xEF\xBB\xBFx,y\r\n1,2\r\n3,\r\n\r\n");
  EXPECT_EQ(table.column_names, (Strings{"x", "y"}));
  EXPECT_EQ(table.rows, 2u);
  EXPECT_EQ(table.at(1, 0), 3.0);
  EXPECT_TRUE(table.missing(1, 1));
}

TEST(TableReader, HandlesBareCarriageReturnLineEnds) {
  const Table table = read_text("1\t2\r3\t4\r");
  EXPECT_EQ(table.rows, 2u);
  EXPECT_EQ(row_values(table, 1), (Doubles{3, 4}));
}

TEST(TableReader, IgnoresTrailingBlankLinesAndLastNewline) {
  EXPECT_EQ(read_text("1,2\n3,4\n\n  \n\t\n").rows, 2u);
  EXPECT_EQ(read_text("1,2\n3,4").rows, 2u);
}

TEST(TableReader, RowNumbersInMessagesAreFileLines) {
  // Two leading blank lines shift the data to lines 3 and 4.
  const std::string message = input_error("\n\n1,2\n3,x\n");
  EXPECT_TRUE(contains(message, "data.csv, row 4, column 2: 'x' is not a number"));
}

TEST(TableReader, BlankLineBetweenRowsIsAnError) {
  const std::string message = input_error("1,2\n3,4\n\n5,6\n");
  EXPECT_TRUE(contains(message, "line 3 is blank"));
}

// --- errors -------------------------------------------------------------------------------

TEST(TableReader, EmptyInputHasNoDataRows) {
  EXPECT_TRUE(contains(input_error(""), "data.csv: no data rows"));
  EXPECT_TRUE(contains(input_error("\n \r\n\n"), "data.csv: no data rows"));
  EXPECT_TRUE(contains(input_error("\xEF\xBB\xBF"), "data.csv: no data rows"));
}

TEST(TableReader, HeaderAloneHasNoDataRows) {
  EXPECT_TRUE(contains(input_error("x,y,z\n"), "data.csv: no data rows"));
}

TEST(TableReader, RaggedRowNamesBothRows) {
  EXPECT_TRUE(contains(input_error("a,b,c,d\n1,2,3,4\n1,2,3,4\n1,2,3,4\n1,2,3\n"),
                       "data.csv: row 5 has 3 columns, expected 4 (from row 1)"));
  EXPECT_TRUE(contains(input_error("1 2\n3 4 5\n"), "row 2 has 3 columns, expected 2"));
}

TEST(TableReader, NonNumericCellNamesRowAndColumn) {
  EXPECT_TRUE(contains(input_error("x,y\n1,2\n3,abc\n"),
                       "data.csv, row 3, column 2: 'abc' is not a number"));
}

TEST(TableReader, ColumnNumbersCountTheIdColumn) {
  EXPECT_TRUE(contains(input_error("id,x,y\na,1,2\nb,3,oops\n"), "row 3, column 3: 'oops'"));
}

TEST(TableReader, InfiniteValuesAreRejected) {
  for (const std::string value :
       {"inf", "-inf", "Infinity", "-INFINITY", "1e999", "-1.5e400", "+inf"}) {
    const std::string message = input_error("x,y\n1,2\n3," + value + "\n");
    EXPECT_TRUE(contains(message, "data.csv, row 3, column 2: '" + value + "' is infinite"));
    EXPECT_TRUE(contains(message, "finite values or a missing marker"));
  }
}

TEST(TableReader, InfiniteValueInFirstRowIsNotTakenForAHeader) {
  EXPECT_TRUE(contains(input_error("1,inf\n3,4\n"), "row 1, column 2: 'inf' is infinite"));
}

TEST(TableReader, OneDataRowIsTooFew) {
  EXPECT_TRUE(contains(input_error("x,y\n1,2\n"), "kingman needs at least two rows"));
  EXPECT_TRUE(contains(input_error("1 2 3\n"), "kingman needs at least two rows"));
}

TEST(TableReader, RowWithEveryValueMissingIsNamed) {
  const std::string message = input_error("x,y\n1,2\nNA,\n5,6\n");
  EXPECT_TRUE(contains(message, "data.csv, row 3: every value is missing"));
  EXPECT_TRUE(contains(message, "cannot be clustered"));
  const std::string with_id = input_error("id,x\na,1\nb,NA\n");
  EXPECT_TRUE(contains(with_id, "row 3 ('b'): every value is missing"));
}

TEST(TableReader, ColumnWithEveryValueMissingIsNamed) {
  const std::string message = input_error("id,x,y\na,1,NA\nb,2,\nc,3,nan\n");
  EXPECT_TRUE(contains(message, "data.csv, column 3 ('y'): every value is missing"));
  EXPECT_TRUE(contains(input_error("1,\n2,\n"), "data.csv, column 2: every value is missing"));
}

TEST(TableReader, LongBadCellsAreShortenedInMessages) {
  const std::string long_cell(500, 'z');
  const std::string message = input_error("1,2\n3," + long_cell + "\n");
  EXPECT_TRUE(contains(message, "is not a number"));
  EXPECT_LT(message.size(), 200u);
}

// --- files --------------------------------------------------------------------------------

TEST(TableReader, ReadsFromAFile) {
  TempDir dir;
  const std::string path = dir.write("points.tsv", "name\tx\ty\r\np\t1\t2\r\nq\t3\tNA\r\n");
  const Table table = read_table(path);
  EXPECT_EQ(table.source, path);
  EXPECT_EQ(table.row_names, (Strings{"p", "q"}));
  EXPECT_EQ(table.column_names, (Strings{"x", "y"}));
  EXPECT_EQ(table.at(1, 0), 3.0);
  EXPECT_TRUE(table.missing(1, 1));
}

TEST(TableReader, ErrorsFromAFileNameThePath) {
  TempDir dir;
  const std::string path = dir.write("bad.csv", "1,2\n3,x\n");
  try {
    read_table(path);
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_TRUE(contains(error.what(), path + ", row 2, column 2"));
  }
}

TEST(TableReader, MissingFileIsAnInputError) {
  TempDir dir;
  const std::string path = dir.write("present.csv", "") + ".absent";
  try {
    read_table(path);
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_TRUE(contains(error.what(), path));
    EXPECT_TRUE(contains(error.what(), "No such file"));
  }
}

TEST(TableReader, ReadsALargeTableExactly) {
  constexpr std::size_t kRows = 10000;
  constexpr std::size_t kCols = 20;
  std::mt19937_64 random(7);
  std::normal_distribution<double> normal;
  std::vector<double> expected(kRows * kCols);
  std::string text;
  for (std::size_t c = 0; c < kCols; ++c) text += (c ? ",c" : "c") + std::to_string(c);
  text += '\n';
  char cell[64];
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::size_t c = 0; c < kCols; ++c) {
      expected[r * kCols + c] = normal(random);
      // %.17g round-trips a double exactly.
      std::snprintf(cell, sizeof cell, "%s%.17g", c ? "," : "", expected[r * kCols + c]);
      text += cell;
    }
    text += '\n';
  }
  TempDir dir;
  const Table table = read_table(dir.write("large.csv", text));
  ASSERT_EQ(table.rows, kRows);
  ASSERT_EQ(table.cols, kCols);
  EXPECT_EQ(table.column_names.back(), "c19");
  EXPECT_EQ(table.values, expected);
}

}  // namespace
}  // namespace kingman
