#!/usr/bin/python3
"""Exports the streaming benchmark's model (bench/streaming.sh) with PyTorch: a voice-activity-style
recurrent model called once per 512-sample chunk with its state carried from call to call.

  x: float[batch, 512] (one chunk) -> 4 frames of 128 -> Linear 128->128 + ReLU -> LSTM (hidden 128)
  from (h, c): float[1, batch, 128] each -> Linear 128->1 + Sigmoid
  outputs: prob: float[batch, 1], h_out, c_out: float[1, batch, 128] (the next call's h, c)

The state's batch dim is dynamic (exported as a symbol), as in a streaming server's models. Writes
<out>/model.onnx, input_{x,h,c}.npy, signal.npy (20 chunks) and PyTorch's output after them from
zero state (expected_prob_20.npy); and <out>/null.onnx, the same inputs and outputs through one
trivial op each (prob = mean of x, h_out = -h, c_out = -c): its call time is a runtime's cost per
call beyond the kernels (binding, dispatch, outputs, state hand-off).
"""
import argparse
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # must precede the torch import

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper
from torch import nn

SEED = 20261126
CHUNK, FRAME, HIDDEN = 512, 128, 128


class ChunkLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.encode = nn.Linear(FRAME, HIDDEN)
        self.lstm = nn.LSTM(HIDDEN, HIDDEN, batch_first=True)
        self.decide = nn.Linear(HIDDEN, 1)

    def forward(self, x, h, c):
        frames = torch.relu(self.encode(x.view(x.size(0), CHUNK // FRAME, FRAME)))
        seq, (h_out, c_out) = self.lstm(frames, (h, c))
        prob = torch.sigmoid(self.decide(seq[:, -1, :]))
        return prob, h_out, c_out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/models/out/stream_lstm")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    model = ChunkLSTM().eval()
    with torch.no_grad():  # real-scale weights (default inits give near-constant outputs)
        for p in model.parameters():
            p.copy_(torch.randn_like(p) * (1.0 / np.sqrt(p.shape[-1])))
    rng = np.random.default_rng(SEED)
    signal = rng.standard_normal((20, 1, CHUNK)).astype(np.float32)
    h = np.zeros((1, 1, HIDDEN), np.float32)
    c = np.zeros((1, 1, HIDDEN), np.float32)
    path = os.path.join(args.out, "model.onnx")
    torch.onnx.export(model, (torch.from_numpy(signal[0]), torch.from_numpy(h), torch.from_numpy(c)), path,
                      input_names=["x", "h", "c"], output_names=["prob", "h_out", "c_out"], opset_version=17,
                      dynamic_axes={"x": {0: "batch"}, "h": {1: "batch"}, "c": {1: "batch"},
                                    "prob": {0: "batch"}, "h_out": {1: "batch"}, "c_out": {1: "batch"}})
    onnx.checker.check_model(path, full_check=True)
    np.save(os.path.join(args.out, "input_x.npy"), signal[0])
    np.save(os.path.join(args.out, "input_h.npy"), h)
    np.save(os.path.join(args.out, "input_c.npy"), c)
    np.save(os.path.join(args.out, "signal.npy"), signal)
    with torch.no_grad():
        state = (torch.from_numpy(h), torch.from_numpy(c))
        for chunk in signal:
            prob, *state = model(torch.from_numpy(chunk), *state)
    np.save(os.path.join(args.out, "expected_prob_20.npy"), prob.numpy())
    print("exported %s (prob after 20 chunks: %.6f)" % (path, float(prob)))
    null = helper.make_graph(
        [helper.make_node("ReduceMean", ["x"], ["prob"], axes=[1], keepdims=1),
         helper.make_node("Neg", ["h"], ["h_out"]), helper.make_node("Neg", ["c"], ["c_out"])],
        "stream_null",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", CHUNK]),
         helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, "batch", HIDDEN]),
         helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, "batch", HIDDEN])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 1]),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [1, "batch", HIDDEN]),
         helper.make_tensor_value_info("c_out", TensorProto.FLOAT, [1, "batch", HIDDEN])])
    null_model = helper.make_model(null, opset_imports=[helper.make_opsetid("", 17)])
    null_model.ir_version = 8
    onnx.checker.check_model(null_model, full_check=True)
    onnx.save(null_model, os.path.join(args.out, "null.onnx"))


if __name__ == "__main__":
    main()
