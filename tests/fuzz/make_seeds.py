#!/usr/bin/python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/seed-*) from ONNX's backend
test data (libonnx-testdata), numpy and hand-written texts; the .kiln seeds come from `kiln
compile` (KILN=path/to/kiln). The seeds are committed: run this only to change them. Each seed
uses its target's input layout (the top comment of tests/fuzz/<target>.cpp)."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
TESTDATA = "/usr/share/libonnx-testdata/data/node"

# Small models of the backend tests: common ops, attributes, initializers, control flow,
# sequences and optionals, quantization, strings.
IMPORT_MODELS = [
    "test_add", "test_conv_with_strides_padding", "test_gemm_all_attributes", "test_reshape_negative_dim",
    "test_slice_neg_steps", "test_gather_negative_indices", "test_concat_3d_axis_negative_1",
    "test_constant", "test_constantofshape_int_zeros", "test_cast_FLOAT_to_FLOAT16", "test_if", "test_if_seq",
    "test_if_opt", "test_loop11", "test_loop13_seq", "test_scan9_sum", "test_sequence_insert_at_back",
    "test_sequence_map_add_2_sequences", "test_optional_get_element_sequence", "test_optional_has_element_empty",
    "test_quantizelinear", "test_dequantizelinear", "test_qlinearmatmul_2D", "test_strnormalizer_export_monday_casesensintive_lower",
    "test_softmax_axis_0_expanded", "test_layer_normalization_2d_axis0",
    "test_lstm_defaults", "test_resize_upsample_scales_linear", "test_einsum_batch_matmul", "test_top_k",
    "test_nonzero_example", "test_range_float_type_positive_delta_expanded", "test_split_variable_parts_1d",
    "test_batchnorm_example", "test_maxpool_2d_pads", "test_reduce_sum_keepdims_example", "test_where_example",
    "test_expand_dim_changed", "test_tile", "test_transpose_all_permutations_0", "test_castlike_FLOAT_to_STRING_expanded",
]
# Input tensors (.pb) of various dtypes, and sequences and optionals, by (test, file, kind):
# kind 0 tensor, 1 sequence, 2 optional (Value::Kind).
TENSOR_FILES = [
    ("test_add", "input_0.pb", 0), ("test_cast_FLOAT_to_FLOAT16", "output_0.pb", 0),
    ("test_gather_negative_indices", "input_1.pb", 0), ("test_where_example", "input_0.pb", 0),
    ("test_castlike_FLOAT_to_STRING_expanded", "output_0.pb", 0), ("test_quantizelinear", "output_0.pb", 0),
    ("test_cast_FLOAT_to_BFLOAT16", "output_0.pb", 0), ("test_reduce_sum_keepdims_example", "input_1.pb", 0),
    ("test_sequence_insert_at_back", "input_0.pb", 1), ("test_sequence_map_add_2_sequences", "input_1.pb", 1),
    ("test_optional_get_element_sequence", "input_0.pb", 2), ("test_optional_has_element_empty", "input_0.pb", 2),
]


def u32(n):
    return struct.pack("<I", n)


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seed-" + name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def external_data_model():
    """A model whose two initializers live in weights.bin: (model bytes, weights bytes)."""
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "W")
    b = numpy_helper.from_array(np.array([1, 2, 3, 4], dtype=np.float32), "B")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["mm"]), helper.make_node("Add", ["mm", "B"], ["y"])], "external",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    weights = b""
    for tensor in model.graph.initializer:
        raw = tensor.raw_data
        tensor.ClearField("raw_data")
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (("location", "weights.bin"), ("offset", str(len(weights))), ("length", str(len(raw)))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        weights += raw + b"\0" * (-len(raw) % 64)
    return model.SerializeToString(), weights


def onnx_seeds():
    for test in IMPORT_MODELS:
        write("fuzz_onnx_import", test[len("test_"):] + ".onnx", read(os.path.join(TESTDATA, test, "model.onnx")))
    model, weights = external_data_model()
    write("fuzz_onnx_import", "external_data.onnx", model)
    write("fuzz_onnx_external_data", "matmul_add", u32(len(model)) + model + weights)
    for test in ("test_add", "test_if", "test_loop11"):
        inline = read(os.path.join(TESTDATA, test, "model.onnx"))
        write("fuzz_onnx_external_data", test[len("test_"):], u32(len(inline)) + inline)


def tensor_proto_seeds():
    for test, name, kind in TENSOR_FILES:
        pb = read(os.path.join(TESTDATA, test, "test_data_set_0", name))
        write("fuzz_tensor_proto", f"{test[len('test_'):]}_{name[:-3]}", bytes([kind]) + u32(len(pb)) + pb)
    values = np.arange(6, dtype=np.int64).reshape(2, 3)
    tensor = numpy_helper.from_array(values, "t")
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "data.bin"), ("offset", "0"), ("length", str(values.nbytes))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    pb = tensor.SerializeToString()
    write("fuzz_tensor_proto", "external_int64", bytes([0]) + u32(len(pb)) + pb + values.tobytes())
    # 512 GiB declared, no length, 8 bytes of file: refused before anything is allocated.
    del tensor.dims[:]
    tensor.dims.append(1 << 36)
    del tensor.external_data[2:]
    pb = tensor.SerializeToString()
    write("fuzz_tensor_proto", "external_huge_dims_small_file", bytes([0]) + u32(len(pb)) + pb + values.tobytes()[:8])


def npy_seeds():
    import io
    arrays = {
        "float32_2x3": np.arange(6, dtype=np.float32).reshape(2, 3), "float64_scalar": np.array(2.5),
        "float16": np.array([1, 2], dtype=np.float16), "int8": np.array([-1, 2], dtype=np.int8),
        "int16": np.array([3], dtype=np.int16), "int32_empty": np.zeros((0, 4), dtype=np.int32),
        "int64": np.array([[1], [2]], dtype=np.int64), "uint8": np.array([255], dtype=np.uint8),
        "uint16": np.array([7], dtype=np.uint16), "uint32": np.array([9], dtype=np.uint32),
        "uint64": np.array([11], dtype=np.uint64), "bool": np.array([True, False]),
        "unicode": np.array(["kiln", "ß", ""]),
    }
    for name, array in arrays.items():
        out = io.BytesIO()
        np.save(out, array)
        write("fuzz_npy", name + ".npy", out.getvalue())
    out = io.BytesIO()
    np.lib.format.write_array(out, np.ones((2, 2), dtype=np.float32), version=(2, 0))
    write("fuzz_npy", "version2.npy", out.getvalue())
    out = io.BytesIO()
    np.save(out, np.asfortranarray(np.ones((2, 3), dtype=np.float32)))
    write("fuzz_npy", "fortran_order.npy", out.getvalue())


def option_seeds():
    texts = [
        (0, "shape_profile", "batch=1:8:32,seq=1:128:512"), (0, "shape_profile_one", "n=2:2:2"),
        (1, "shape", "input=1x3x224x224"), (1, "shape_scalar", "x="),
        (2, "name_values", "x=in.npy\ny=other.pb"),
        (3, "command_line", "--threads\n2\n--providers\ncpu,cpu_ref\n--allow-fallback\ncpu_ref\n--mode\njit\n"
                            "--shape-profile\nbatch=1:4:16\n--out-of-profile\npad\n--shape\nx=4x3\n--max-variants\n3\n"
                            "--max-loop-iterations\n10\n--tune-budget-ms\n2.5\n--isa\navx2\n--no-optimize\n"
                            "--disable-pass\nfold_constants\n--specialize\n--require-signature"),
        (3, "command_line_equals", "--mode=eager\n--shape=x=1x2\n--tune"),
        (4, "isa", "avx512_core"),
    ]
    for parser, name, text in texts:
        write("fuzz_option_parsers", name, bytes([parser]) + text.encode())


def session_run_seeds():
    def tensor(dtype_choice, dims, data):
        return bytes([dtype_choice, 0]) + bytes(dims) + data
    floats = np.linspace(-2, 2, 12, dtype=np.float32).tobytes()
    for choice, name in ((0, "graph"), (1, "eager")):
        x = tensor(0, [3, 4], floats)
        indices = tensor(0, [2], np.array([2, -1], dtype=np.int64).tobytes())
        starts = tensor(0, [1], np.array([1], dtype=np.int64).tobytes())
        write("fuzz_session_run", name, bytes([choice]) + x + indices + starts)
    x = tensor(0, [1, 4], floats[:16])
    bad_indices = tensor(0, [1], np.array([7], dtype=np.int64).tobytes())
    write("fuzz_session_run", "index_out_of_range", bytes([0]) + x + bad_indices + tensor(0, [1], bytes(8)))


def artifact_seeds(kiln):
    """Artifacts of two small models, as files (flags 0, 8) and resealed (flags 1, 1|2|4|8|16)."""
    with tempfile.TemporaryDirectory() as tmp:
        model, weights = external_data_model()
        with open(os.path.join(tmp, "weights.bin"), "wb") as f:
            f.write(weights)
        with open(os.path.join(tmp, "matmul_add.onnx"), "wb") as f:
            f.write(model)
        shutil.copy(os.path.join(TESTDATA, "test_gemm_all_attributes", "model.onnx"), os.path.join(tmp, "gemm.onnx"))
        for name in ("matmul_add", "gemm"):
            kiln_path = os.path.join(tmp, name + ".kiln")
            subprocess.run([kiln, "compile", os.path.join(tmp, name + ".onnx"), "-o", kiln_path], check=True,
                           stdout=subprocess.DEVNULL)
            data = read(kiln_path)
            write("fuzz_artifact", name + "_file", bytes([0]) + data)
            write("fuzz_artifact", name + "_file_signature_required", bytes([8]) + data)
            write("fuzz_artifact", name + "_resealed", bytes([1]) + resealed(data))
            write("fuzz_artifact", name + "_resealed_signed_warm_up", bytes([1 | 2 | 4 | 8 | 16]) + resealed(data))


def resealed(data):
    """The records fuzz_artifact reseals: the manifest, then each section's name and bytes."""
    import json
    manifest_offset, manifest_size = struct.unpack_from("<QQ", data, 16)
    manifest = json.loads(data[manifest_offset:manifest_offset + manifest_size])
    out = u32(manifest_size) + data[manifest_offset:manifest_offset + manifest_size]
    for section in manifest["sections"]:
        name = section["name"].encode()
        out += u32(len(name)) + name + u32(section["size"]) + data[section["offset"]:section["offset"] + section["size"]]
    return out


def gguf_seeds():
    """GGUF files of every metadata value type, nested arrays, an alignment key and tensors of
    plain and block-quantized types (the layout of ../shared/llm/README.md)."""
    def gstr(text):
        data = text.encode()
        return struct.pack("<Q", len(data)) + data

    def key(name, type_id, value):
        return gstr(name) + u32(type_id) + value

    def tensor(name, dims, type_id, offset):
        return gstr(name) + u32(len(dims)) + b"".join(struct.pack("<Q", d) for d in dims) + u32(type_id) + struct.pack("<Q", offset)

    def pad(data, alignment):
        return data + bytes((alignment - len(data) % alignment) % alignment)

    keys = [key("general.architecture", 8, gstr("llama")), key("llama.block_count", 4, u32(5)),
            key("llama.attention.layer_norm_rms_epsilon", 6, struct.pack("<f", 1e-5)),
            key("llama.rope.freq_base", 12, struct.pack("<d", 10000.0)), key("v.i8", 1, b"\xff"), key("v.u16", 2, b"\x01\x00"),
            key("v.i16", 3, b"\xfe\xff"), key("v.i32", 5, struct.pack("<i", -3)), key("v.u64", 10, struct.pack("<Q", 7)),
            key("v.i64", 11, struct.pack("<q", -9)), key("tokenizer.ggml.add_bos_token", 7, b"\x01"),
            key("tokenizer.ggml.tokens", 9, u32(8) + struct.pack("<Q", 3) + gstr("<unk>") + gstr("<s>") + gstr("</s>")),
            key("tokenizer.ggml.scores", 9, u32(6) + struct.pack("<Q", 3) + struct.pack("<3f", 0.0, -1.0, -2.0)),
            key("nested", 9, u32(9) + struct.pack("<Q", 1) + u32(5) + struct.pack("<Q", 2) + struct.pack("<2i", 1, 2))]
    header = b"GGUF" + u32(3) + struct.pack("<Q", 3) + struct.pack("<Q", len(keys))
    infos = tensor("token_embd.weight", [4, 2], 0, 0) + tensor("blk.0.attn_q.weight", [32, 2], 8, 32) + \
        tensor("blk.0.ffn_down.weight", [256], 12, 128)
    data = pad(struct.pack("<8f", *range(8)), 32) + pad(bytes(range(68)), 32) + bytes(144)
    write("fuzz_gguf", "llama_like.gguf", pad(header + b"".join(keys) + infos, 32) + data)
    aligned = b"GGUF" + u32(2) + struct.pack("<Q", 1) + struct.pack("<Q", 1) + key("general.alignment", 4, u32(64)) + \
        tensor("w", [3], 1, 0)
    write("fuzz_gguf", "version2_aligned.gguf", pad(aligned, 64) + bytes(6))
    write("fuzz_gguf", "header_only.gguf", b"GGUF" + u32(3) + struct.pack("<Q", 0) + struct.pack("<Q", 0))


if __name__ == "__main__":
    onnx_seeds()
    tensor_proto_seeds()
    npy_seeds()
    option_seeds()
    session_run_seeds()
    gguf_seeds()
    if os.environ.get("KILN"):
        artifact_seeds(os.environ["KILN"])
    else:
        print("make_seeds: KILN=path/to/kiln not set, the .kiln seeds are left as they are", file=sys.stderr)
