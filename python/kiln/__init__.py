"""Kiln for Python: an onnxruntime-like InferenceSession over Kiln's compiler and runtime.

    import kiln
    session = kiln.InferenceSession("model.onnx")
    outputs = session.run(None, {"input": x})

docs/PYTHON.md: the API, and every difference from onnxruntime.
"""

from ._kiln import __version__
from .artifacts import compile, generate_key_pair, sign, verify
from .generator import Generator
from .errors import (AllocationFailure, BackendFailure, Cancelled, IntegrityFailure, Internal, InvalidArgument, InvalidModel,
                     KilnError, NotFound, NumericalIssue, ShapeGuardFailure, UnsupportedOperator, UnsupportedTarget)
from .options import ExecutionMode, GraphOptimizationLevel, RunOptions, SessionOptions
from .session import InferenceSession, ModelMetadata, NodeArg, get_available_providers, get_device
from .stream import IOBinding, OrtValue, Stream

__all__ = [
    "__version__", "InferenceSession", "Generator", "compile", "verify", "sign", "generate_key_pair", "SessionOptions", "RunOptions", "GraphOptimizationLevel", "ExecutionMode",
    "NodeArg", "ModelMetadata", "Stream", "IOBinding", "OrtValue", "get_available_providers", "get_device", "KilnError", "InvalidModel",
    "UnsupportedOperator", "UnsupportedTarget", "InvalidArgument", "ShapeGuardFailure", "AllocationFailure",
    "BackendFailure", "NumericalIssue", "IntegrityFailure", "NotFound", "Internal", "Cancelled",
]
