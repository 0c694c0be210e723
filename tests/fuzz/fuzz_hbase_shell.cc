// Fuzz target: the HBase shell's line parser (shell/hbase_syntax.h).
// Properties: a line either parses or fails with INVALID_ARGUMENT; every argument it
// gives, written back with format_shell_value, parses to the same value (the shell prints
// values that way and users paste them back); to_string_binary writes only printable bytes.
#include <string>
#include <string_view>

#include "fuzz_target.h"
#include "shell/hbase_syntax.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  auto cmd = cellar::parse_shell_line(line);
  if (!cmd) {
    fuzz_check(cmd.code() == cellar::code::invalid_argument, "a parse error is INVALID_ARGUMENT");
    fuzz_check(!cmd.error().message().empty(), "a parse error says what is wrong");
  } else {
    for (const auto& arg : cmd->args) {
      const std::string text = "x " + cellar::format_shell_value(arg);
      auto again = cellar::parse_shell_line(text);
      fuzz_check(again.is_ok(), "a formatted value parses");
      fuzz_check(again->args.size() == 1, "a formatted value is one argument");
      fuzz_check(again->args[0] == arg, "a formatted value parses to itself");
    }
  }
  for (unsigned char c : cellar::to_string_binary(line)) fuzz_check(c >= 0x20 && c <= 0x7e, "printable");
  return 0;
}
