// verify, sign, generate_key_pair for the Python module (artifact_functions.h).
#include "artifact_functions.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "kiln/artifact/signing.h"
#include "kiln/artifact/verification.h"
#include "kiln/io/file.h"
#include "status_error.h"

namespace kiln::python {

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

// Every check of the artifact at `path`: a dict of what was found, or the failing check's error
// (its message starts with the check's name).
py::dict verify(const std::string& path, const std::optional<py::bytes>& public_key, bool require_signature, const std::string& isa) {
  std::optional<std::string> trusted;
  if (public_key) trusted = std::string(*public_key);
  const artifact::ArtifactVerification v = [&] {
    py::gil_scoped_release release;
    return artifact::verify_artifact(path, trusted, require_signature, isa);
  }();
  if (!v.failed_check.empty()) throw StatusError(Status(v.failure.code(), v.failed_check + ": " + v.failure.message()));
  py::list sections;
  for (const artifact::ArtifactVerification::Section& s : v.sections)
    sections.append(py::dict("name"_a = s.name, "bytes"_a = s.bytes, "hashed_chunks"_a = s.hashed_chunks));
  return py::dict("format_version"_a = v.format_version, "file_bytes"_a = v.file_bytes, "manifest_sha256"_a = v.manifest_sha256,
                  "sections"_a = sections, "signature"_a = v.signature, "required_features"_a = v.required_features,
                  "compiled_for"_a = v.compiled_for, "target_level"_a = v.target_level);
}

void sign(const std::string& path, const py::bytes& secret_key) {
  const std::string key = secret_key;
  if (key.size() != artifact::kSecretKeyBytes)
    throw StatusError(invalid_argument("a secret key has " + std::to_string(artifact::kSecretKeyBytes) + " bytes, got " +
                                       std::to_string(key.size())));
  py::gil_scoped_release release;
  const std::string file = value_or_throw(io::read_file(path));
  Result<std::string> signed_file = artifact::sign(file, key);
  if (!signed_file.is_ok()) throw StatusError(signed_file.status().with_context(path));
  check(io::write_file_atomic(path, signed_file.value()));
}

py::tuple generate_key_pair() {
  const artifact::KeyPair keys = value_or_throw(artifact::generate_key_pair());
  return py::make_tuple(py::bytes(keys.public_key), py::bytes(keys.secret_key));
}

}  // namespace

void add_artifact_functions(py::module_& m) {
  m.def("verify", &verify, "path"_a, "public_key"_a = py::none(), "require_signature"_a = false, "isa"_a = "");
  m.def("sign", &sign, "path"_a, "secret_key"_a);
  m.def("generate_key_pair", &generate_key_pair);
}

}  // namespace kiln::python
