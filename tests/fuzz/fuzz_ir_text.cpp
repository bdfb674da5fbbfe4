// Fuzz target: IR text (ir::parse_graph, the printer's form read back): any bytes give a graph or
// an InvalidArgument, never a crash; a graph it gives prints and reads back to the same text.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kiln::Result<std::unique_ptr<kiln::ir::Graph>> graph = kiln::ir::parse_graph(text);
  if (!graph.is_ok()) return 0;
  const std::string printed = kiln::ir::print_graph(*graph.value());
  kiln::Result<std::unique_ptr<kiln::ir::Graph>> again = kiln::ir::parse_graph(printed);
  if (!again.is_ok() || kiln::ir::print_graph(*again.value()) != printed) std::abort();
  return 0;
}
