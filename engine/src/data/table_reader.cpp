#include "kingman/data/table_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "kingman/error.hpp"

namespace kingman {
namespace {

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

// What a cell holds. Infinite numbers are kept apart from text so that header and id
// detection treat them as numbers and the user gets the precise "is infinite" error.
enum class CellKind { number, infinite, missing, text };

struct ParsedCell {
  CellKind kind;
  double value;
};

// One non-blank line of the input; its cells are a slice of the reader's flat cell list.
struct RawRow {
  std::size_t line;        // 1-based line number in the file, for messages
  std::size_t first_cell;  // index of the row's first cell in the flat list
  std::size_t cell_count;  // number of cells on the line
};

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char lower = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (lower != b[i]) return false;
  }
  return true;
}

bool is_missing_token(std::string_view cell) {
  return cell.empty() || equals_ignoring_case(cell, "na") || equals_ignoring_case(cell, "nan");
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// from_chars reports "out of range" for both overflow and underflow; this tells them apart by
// the decimal position of the first significant digit, so that 1e-999 reads as 0 and 1e999 as
// infinite. `number` has already matched the floating-point grammar.
bool decimal_magnitude_is_positive(std::string_view number) {
  std::size_t pos = 0;
  if (pos < number.size() && (number[pos] == '-' || number[pos] == '+')) ++pos;
  long long magnitude = 0;  // the value is below 10^magnitude, at or above 10^(magnitude-1)
  bool seen_significant = false;
  for (; pos < number.size() && is_digit(number[pos]); ++pos) {
    if (number[pos] != '0') seen_significant = true;
    if (seen_significant) ++magnitude;
  }
  if (pos < number.size() && number[pos] == '.') {
    for (++pos; pos < number.size() && is_digit(number[pos]); ++pos) {
      if (seen_significant) continue;
      if (number[pos] != '0') {
        seen_significant = true;
      } else {
        --magnitude;
      }
    }
  }
  if (pos < number.size() && (number[pos] == 'e' || number[pos] == 'E')) {
    ++pos;
    bool negative = false;
    if (pos < number.size() && (number[pos] == '-' || number[pos] == '+')) {
      negative = number[pos] == '-';
      ++pos;
    }
    long long exponent = 0;
    for (; pos < number.size() && is_digit(number[pos]); ++pos) {
      exponent = std::min(exponent * 10 + (number[pos] - '0'), 1'000'000'000LL);
    }
    magnitude += negative ? -exponent : exponent;
  }
  return magnitude > 0;
}

// Parses a trimmed, unquoted cell. Locale-independent: the whole cell must be one number.
ParsedCell parse_cell(std::string_view cell) {
  if (is_missing_token(cell)) return {CellKind::missing, kMissing};
  std::string_view number = cell;
  // from_chars rejects a leading '+', which spreadsheets sometimes write.
  if (number.size() > 1 && number[0] == '+' && number[1] != '-' && number[1] != '+') {
    number.remove_prefix(1);
  }
  double value = 0.0;
  const char* end = number.data() + number.size();
  auto [stop, error] = std::from_chars(number.data(), end, value, std::chars_format::general);
  if (stop != end || error == std::errc::invalid_argument) return {CellKind::text, kMissing};
  if (error == std::errc::result_out_of_range) {
    if (decimal_magnitude_is_positive(number)) return {CellKind::infinite, kMissing};
    return {CellKind::number, number[0] == '-' ? -0.0 : 0.0};
  }
  if (std::isnan(value)) return {CellKind::missing, kMissing};  // nan(...) spellings
  if (std::isinf(value)) return {CellKind::infinite, value};
  return {CellKind::number, value};
}

bool is_text(std::string_view cell) {
  return parse_cell(cell).kind == CellKind::text;
}

// Cell text for messages: long cells are shortened so one bad cell cannot flood the terminal.
std::string quoted_for_message(std::string_view cell) {
  constexpr std::size_t kMaxShown = 40;
  if (cell.size() <= kMaxShown) return fmt::format("'{}'", cell);
  return fmt::format("'{}...'", cell.substr(0, kMaxShown));
}

class LineSplitter {
 public:
  LineSplitter(const std::string& source, char delimiter)
      : source_(source), delimiter_(delimiter) {}

  // Appends the cells of [begin, end) to `cells`. Quoted cells are unescaped in place, which
  // is safe because unescaped text is never longer than its quoted form.
  void split(char* begin, char* end, std::size_t line, std::vector<std::string_view>& cells) const {
    if (delimiter_ == ' ') {
      split_on_blank_runs(begin, end, line, cells);
    } else {
      split_on_delimiter(begin, end, line, cells);
    }
  }

 private:
  void split_on_delimiter(char* p, char* end, std::size_t line,
                          std::vector<std::string_view>& cells) const {
    while (true) {
      while (p < end && *p != delimiter_ && is_blank(*p)) ++p;
      if (p < end && *p == '"') {
        cells.push_back(unquote(p, end, line, cells.size()));
        while (p < end && *p != delimiter_ && is_blank(*p)) ++p;
        if (p < end && *p != delimiter_) throw_text_after_quote(line, cells.size());
      } else {
        char* start = p;
        while (p < end && *p != delimiter_) ++p;
        cells.push_back(trim(std::string_view(start, static_cast<std::size_t>(p - start))));
      }
      if (p == end) return;
      ++p;  // past the delimiter
    }
  }

  void split_on_blank_runs(char* p, char* end, std::size_t line,
                           std::vector<std::string_view>& cells) const {
    while (true) {
      while (p < end && is_blank(*p)) ++p;
      if (p == end) return;
      if (*p == '"') {
        cells.push_back(unquote(p, end, line, cells.size()));
        if (p < end && !is_blank(*p)) throw_text_after_quote(line, cells.size());
      } else {
        char* start = p;
        while (p < end && !is_blank(*p)) ++p;
        cells.emplace_back(start, static_cast<std::size_t>(p - start));
      }
    }
  }

  // `p` points at an opening quote; on return it points just past the closing quote. A doubled
  // quote inside stands for one quote character.
  std::string_view unquote(char*& p, char* end, std::size_t line, std::size_t cells_before) const {
    char* out = p;
    char* const text_begin = p;
    ++p;
    while (true) {
      if (p == end) {
        throw InputError(fmt::format("{}, row {}, column {}: quoted cell has no closing quote",
                                     source_, line, cells_before + 1));
      }
      if (*p == '"') {
        if (p + 1 < end && p[1] == '"') {
          *out++ = '"';
          p += 2;
          continue;
        }
        ++p;
        break;
      }
      *out++ = *p++;
    }
    return trim(std::string_view(text_begin, static_cast<std::size_t>(out - text_begin)));
  }

  // `column` is 1-based: the quoted cell has already been appended to this line's cells.
  [[noreturn]] void throw_text_after_quote(std::size_t line, std::size_t column) const {
    throw InputError(fmt::format("{}, row {}, column {}: unexpected text after a closing quote",
                                 source_, line, column));
  }

  const std::string& source_;
  char delimiter_;
};

char detect_delimiter(std::string_view first_line) {
  if (first_line.find('\t') != std::string_view::npos) return '\t';
  if (first_line.find(',') != std::string_view::npos) return ',';
  return ' ';
}

// Splits `text` into non-blank lines of cells. Leading and trailing blank lines are skipped; a
// blank line between rows is an error, since it usually means a truncated or merged file.
struct SplitText {
  std::vector<RawRow> rows;
  std::vector<std::string_view> cells;
};

SplitText split_text(std::string& text, const std::string& source,
                     std::optional<char> forced_delimiter) {
  SplitText split;
  std::size_t start = 0;
  // Old Mac files end lines with a bare CR; everything else ends them with LF (CR LF included).
  const char line_end = text.find('\n') == std::string::npos ? '\r' : '\n';
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) start = 3;  // UTF-8 byte order mark

  std::optional<char> delimiter = forced_delimiter;
  std::optional<LineSplitter> splitter;
  if (delimiter) splitter.emplace(source, *delimiter);
  std::size_t pending_blank_line = 0;  // first blank line seen after a row, 0 if none
  std::vector<std::string_view> line_cells;

  split.cells.reserve(text.size() / 4 + 1);
  for (std::size_t line = 1; start < text.size(); ++line) {
    std::size_t stop = text.find(line_end, start);
    if (stop == std::string::npos) stop = text.size();
    char* begin = text.data() + start;
    char* end = text.data() + stop;
    start = stop + 1;

    if (trim(std::string_view(begin, static_cast<std::size_t>(end - begin))).empty()) {
      if (!split.rows.empty() && pending_blank_line == 0) pending_blank_line = line;
      continue;
    }
    if (pending_blank_line != 0) {
      throw InputError(fmt::format(
          "{}: line {} is blank but data follows on line {}; remove the blank line or fill it "
          "with missing markers (NA)",
          source, pending_blank_line, line));
    }
    if (!splitter) {
      delimiter = detect_delimiter(std::string_view(begin, static_cast<std::size_t>(end - begin)));
      splitter.emplace(source, *delimiter);
    }
    line_cells.clear();
    splitter->split(begin, end, line, line_cells);
    split.rows.push_back({line, split.cells.size(), line_cells.size()});
    split.cells.insert(split.cells.end(), line_cells.begin(), line_cells.end());
  }
  return split;
}

void check_delimiter_option(const TableReadOptions& options) {
  if (!options.delimiter) return;
  char d = *options.delimiter;
  if (d != ',' && d != '\t' && d != ' ') {
    throw OptionError(
        fmt::format("table delimiter must be ',', a tab or ' ' (runs of blanks), got '{}'", d));
  }
}

Table parse_text(std::string& text, const std::string& source, const TableReadOptions& options) {
  check_delimiter_option(options);
  SplitText split = split_text(text, source, options.delimiter);
  const std::vector<RawRow>& rows = split.rows;
  const std::vector<std::string_view>& cells = split.cells;
  if (rows.empty()) throw InputError(fmt::format("{}: no data rows", source));

  auto cell = [&](const RawRow& row, std::size_t column) { return cells[row.first_cell + column]; };

  // R's write.table writes a header that names only the data columns, one cell short of the
  // rows, which start with the row name. Accept that shape as header + id column.
  bool short_header = false;
  if (rows.size() >= 2 && rows[1].cell_count == rows[0].cell_count + 1 &&
      options.header != HeaderMode::absent && options.id_column != IdColumnMode::absent) {
    bool looks_like_header = options.header == HeaderMode::present;
    for (std::size_t c = 0; c < rows[0].cell_count && !looks_like_header; ++c) {
      looks_like_header = is_text(cell(rows[0], c));
    }
    short_header = looks_like_header;
  }

  const std::size_t reference = short_header ? 1 : 0;
  const std::size_t width = rows[reference].cell_count;
  for (std::size_t r = reference + 1; r < rows.size(); ++r) {
    if (rows[r].cell_count != width) {
      throw InputError(fmt::format("{}: row {} has {} columns, expected {} (from row {})", source,
                                   rows[r].line, rows[r].cell_count, width, rows[reference].line));
    }
  }

  bool has_header = false;
  bool has_id = false;
  if (short_header) {
    has_header = true;
    has_id = true;
  } else {
    // Rows after the first are data whatever the header decision, so they decide the id column
    // first; the header decision then skips that column, whose header cell may be anything.
    bool later_rows_start_with_text = width >= 2 && rows.size() >= 2;
    for (std::size_t r = 1; r < rows.size() && later_rows_start_with_text; ++r) {
      later_rows_start_with_text = is_text(cell(rows[r], 0));
    }
    const bool id_candidate =
        options.id_column == IdColumnMode::present ||
        (options.id_column == IdColumnMode::automatic && later_rows_start_with_text);
    switch (options.header) {
      case HeaderMode::present:
        has_header = true;
        break;
      case HeaderMode::absent:
        has_header = false;
        break;
      case HeaderMode::automatic:
        for (std::size_t c = id_candidate ? 1 : 0; c < width && !has_header; ++c) {
          has_header = is_text(cell(rows[0], c));
        }
        break;
    }
    switch (options.id_column) {
      case IdColumnMode::present:
        has_id = true;
        break;
      case IdColumnMode::absent:
        has_id = false;
        break;
      case IdColumnMode::automatic:
        // Without a header the first row is data, so its first cell must be text as well.
        has_id = id_candidate && (has_header || is_text(cell(rows[0], 0)));
        break;
    }
  }

  const std::size_t first_data_row = has_header ? 1 : 0;
  const std::size_t data_rows = rows.size() - first_data_row;
  const std::size_t first_value_column = has_id ? 1 : 0;
  if (data_rows == 0) throw InputError(fmt::format("{}: no data rows", source));
  if (width <= first_value_column) {
    throw InputError(fmt::format("{}: no data columns besides the id column", source));
  }
  if (data_rows < 2) {
    throw InputError(
        fmt::format("{}: kingman needs at least two rows, found {}", source, data_rows));
  }

  Table table;
  table.source = source;
  table.rows = data_rows;
  table.cols = width - first_value_column;
  table.values.resize(table.rows * table.cols);
  if (has_header) {
    const RawRow& header = rows[0];
    const std::size_t first_name = short_header ? 0 : first_value_column;
    table.column_names.reserve(table.cols);
    for (std::size_t c = first_name; c < header.cell_count; ++c) {
      table.column_names.emplace_back(cell(header, c));
    }
  }
  if (has_id) table.row_names.reserve(table.rows);

  for (std::size_t r = 0; r < table.rows; ++r) {
    const RawRow& row = rows[first_data_row + r];
    if (has_id) table.row_names.emplace_back(cell(row, 0));
    double* out = table.values.data() + r * table.cols;
    bool any_observed = false;
    for (std::size_t c = 0; c < table.cols; ++c) {
      const std::string_view text_cell = cell(row, first_value_column + c);
      const ParsedCell parsed = parse_cell(text_cell);
      switch (parsed.kind) {
        case CellKind::number:
          any_observed = true;
          break;
        case CellKind::missing:
          break;
        case CellKind::text:
          throw InputError(fmt::format("{}, row {}, column {}: {} is not a number", source,
                                       row.line, first_value_column + c + 1,
                                       quoted_for_message(text_cell)));
        case CellKind::infinite:
          throw InputError(fmt::format(
              "{}, row {}, column {}: {} is infinite; kingman needs finite values or a missing "
              "marker (empty, NA or NaN)",
              source, row.line, first_value_column + c + 1, quoted_for_message(text_cell)));
      }
      out[c] = parsed.value;
    }
    if (!any_observed) {
      const std::string name = has_id ? fmt::format(" ('{}')", cell(row, 0)) : std::string();
      throw InputError(fmt::format(
          "{}, row {}{}: every value is missing; a point with no observed value cannot be "
          "clustered",
          source, row.line, name));
    }
  }

  for (std::size_t c = 0; c < table.cols; ++c) {
    bool any_observed = false;
    for (std::size_t r = 0; r < table.rows && !any_observed; ++r) {
      any_observed = !std::isnan(table.values[r * table.cols + c]);
    }
    if (!any_observed) {
      const std::string name =
          has_header ? fmt::format(" ('{}')", table.column_names[c]) : std::string();
      throw InputError(fmt::format(
          "{}, column {}{}: every value is missing; a dimension with no observed value carries "
          "no information (remove the column)",
          source, first_value_column + c + 1, name));
    }
  }
  return table;
}

}  // namespace

Table read_table(const std::string& path, const TableReadOptions& options) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) throw InputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::string text;
  std::error_code size_error;
  const auto size = std::filesystem::file_size(path, size_error);
  if (!size_error) text.reserve(static_cast<std::size_t>(size));
  char chunk[1 << 16];
  while (true) {
    const std::size_t got = std::fread(chunk, 1, sizeof chunk, file.get());
    text.append(chunk, got);
    if (got < sizeof chunk) break;
  }
  if (std::ferror(file.get())) {
    throw InputError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  return parse_text(text, path, options);
}

Table read_table(std::istream& in, const std::string& source_name,
                 const TableReadOptions& options) {
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("{}: cannot read", source_name));
  std::string text = std::move(buffer).str();
  return parse_text(text, source_name, options);
}

}  // namespace kingman
