#include "options.hpp"

#include <charconv>
#include <string_view>

#include "tessera/error.hpp"
#include "tessera/runtime.hpp"

namespace tessera::bench {
namespace {

[[noreturn]] void bad_argument(const std::string& message) {
  throw Error(ErrorCode::invalid_argument, -1, "tessera-bench: " + message);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

int parse_positive_int(const std::string& text, const char* what) {
  int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value <= 0) {
    bad_argument(std::string(what) + " wants a positive integer, got '" + text + "'");
  }
  return value;
}

}  // namespace

std::vector<std::size_t> parse_size_list(const std::string& text) {
  std::vector<std::size_t> sizes;
  for (const std::string& part : split_commas(text)) {
    if (part.empty()) bad_argument("--sizes has an empty entry in '" + text + "'");
    const std::size_t bytes = parse_size(part);
    if (bytes == 0) bad_argument("--sizes entries must be at least 1 byte, got '" + part + "'");
    sizes.push_back(bytes);
  }
  return sizes;
}

std::vector<GemmShape> parse_shape_list(const std::string& text) {
  std::vector<GemmShape> shapes;
  for (const std::string& part : split_commas(text)) {
    const std::size_t x1 = part.find('x');
    const std::size_t x2 = x1 == std::string::npos ? x1 : part.find('x', x1 + 1);
    if (x2 == std::string::npos) {
      bad_argument("--shapes entries are MxNxK, got '" + part + "'");
    }
    GemmShape shape;
    shape.m = static_cast<std::size_t>(parse_positive_int(part.substr(0, x1), "--shapes"));
    shape.n =
        static_cast<std::size_t>(parse_positive_int(part.substr(x1 + 1, x2 - x1 - 1), "--shapes"));
    shape.k = static_cast<std::size_t>(parse_positive_int(part.substr(x2 + 1), "--shapes"));
    shapes.push_back(shape);
  }
  return shapes;
}

std::vector<int> parse_int_list(const std::string& text, const char* what) {
  std::vector<int> values;
  for (const std::string& part : split_commas(text))
    values.push_back(parse_positive_int(part, what));
  return values;
}

BenchOptions parse_options(int argc, char** argv) {
  BenchOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](const char* flag) -> std::string {
      if (i + 1 >= argc) bad_argument(std::string(flag) + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else if (arg == "--graph") {
      options.graph = true;
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--sizes") {
      options.sizes = parse_size_list(value("--sizes"));
    } else if (arg == "--iters") {
      options.iters = parse_positive_int(value("--iters"), "--iters");
    } else if (arg == "--shapes") {
      options.shapes = parse_shape_list(value("--shapes"));
    } else if (arg == "--blocks") {
      options.blocks = parse_int_list(value("--blocks"), "--blocks");
    } else if (!arg.empty() && arg[0] == '-') {
      bad_argument("unknown option '" + std::string(arg) + "'");
    } else if (options.name.empty()) {
      options.name = arg;
    } else {
      bad_argument("unexpected argument '" + std::string(arg) + "' (the benchmark is '" +
                   options.name + "')");
    }
  }
  return options;
}

}  // namespace tessera::bench
