// Tests of the report's JSON text: it is always valid UTF-8 JSON, whatever bytes the model's
// names hold.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln::testing {
namespace {

// A node name that is not UTF-8 (ONNX's protobuf does not check): its bytes are replaced in the
// report, which used to throw out of report_json() and end the process.
TEST(ReportJson, NamesThatAreNotUtf8AreReplaced) {
  ScratchDir dir("report_utf8");
  ModelBuilder b(17);
  b.input("x", onnx::TensorProto::FLOAT, {int64_t{2}});
  b.output("y", onnx::TensorProto::FLOAT, {int64_t{2}});
  b.node("Relu", {"x"}, {"y"}, "relu\xff");
  auto session = Session::load(b.save(dir.file("model.onnx")));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const nlohmann::json report = nlohmann::json::parse(session.value()->report_json());
  EXPECT_TRUE(report["target"]["node_implementations"].contains("relu\xef\xbf\xbd")) << report["target"];
}

}  // namespace
}  // namespace kiln::testing
