// Uses the installed C++ API: loads the model given, runs it on zeros, prints each output's shape.
#include <kiln/session.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  auto session = kiln::Session::load(argv[1]);
  if (!session.is_ok()) {
    std::cerr << session.status().to_string() << "\n";
    return 1;
  }
  std::map<std::string, kiln::Tensor> inputs;
  for (const kiln::TensorInfo& info : session.value()->inputs()) {
    std::vector<int64_t> shape = info.shape;
    for (int64_t& d : shape) d = d < 0 ? 1 : d;
    inputs[info.name] = kiln::Tensor::allocate(info.dtype, shape);
  }
  auto outputs = session.value()->run(inputs);
  if (!outputs.is_ok()) {
    std::cerr << outputs.status().to_string() << "\n";
    return 1;
  }
  for (const auto& [name, tensor] : outputs.value()) std::cout << "c++ " << name << " elements " << tensor.element_count() << "\n";
  return 0;
}
