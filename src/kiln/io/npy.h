// NumPy .npy tensor files (format versions 1 and 2, C order, little-endian numeric and bool
// dtypes, fixed-width unicode strings): how users hand Kiln input tensors and receive outputs.
#pragma once

#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::io {

// Reads `path`. Supported dtypes: <f4 <f8 <f2 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1, and <U<n>
// (numpy's str arrays: a string tensor, UTF-8 in Kiln; trailing NULs of an element are dropped).
// NotFound when the file is missing; InvalidArgument naming the file and the field at fault for a
// bad magic, version, header, dtype, fortran_order, shape or a data section of the wrong size.
Result<Tensor> read_npy(const std::string& path);

// Parses .npy bytes; `path` only names the source in messages.
Result<Tensor> parse_npy(const std::string& bytes, const std::string& path);

// Writes `tensor` to `path` atomically (a failure leaves no file at `path`). InvalidArgument for
// element types .npy cannot hold here (bfloat16, complex) and for a string that is not UTF-8.
Status write_npy(const std::string& path, const Tensor& tensor);

// The .npy bytes of `tensor`; InvalidArgument as for write_npy.
Result<std::string> serialize_npy(const Tensor& tensor);

}  // namespace kiln::io
