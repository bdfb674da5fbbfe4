"""Streams: one model called over and over with its buffers bound once and its state carried from
call to call without copies (kiln.Stream), and onnxruntime's IOBinding over the same machinery.

    stream = session.stream(carry={"h_out": "h", "c_out": "c"}, initial={"h": h0, "c": c0})
    for chunk in chunks:
        prob, = stream.run({"x": chunk}, ["prob"])

docs/PYTHON.md, "Streams and IOBinding"."""

import numpy as np

from .errors import InvalidArgument


class Stream:
    """A model called over and over (voice activity, wake words, token by token).

    Bound input arrays are read in place at every call (refill them, or pass new ones to run());
    bound output arrays are written in place; a carried output becomes the next call's input with
    no copy. An array run() returns views the stream's buffer, which later calls leave alone as
    long as the array lives. One call at a time per stream; streams of one session may run in
    different threads at once (a call releases the GIL)."""

    def __init__(self, native, carry=None, initial=None):
        self._native = native
        for output, input_name in (carry or {}).items():
            native.carry(output, input_name)
        for name, array in (initial or {}).items():
            native.bind_input(name, array)

    def bind_input(self, name, array):
        """Binds `array` to input `name` for every call until bound again (None unbinds); for a
        carried input, its initial state. Read in place when C-ordered, aligned and native."""
        self._native.bind_input(name, array)

    def bind_zeros(self, name, shape):
        """Binds input `name` to zeros of `shape` that the stream owns: a carried state starts there,
        and an output that updates it in place (a key/value cache) writes over it from the first
        call; reset() starts from zeros again."""
        self._native.bind_zeros(name, [int(d) for d in shape])

    def bind_output(self, name, array):
        """Every call writes output `name` into `array` (writable, C-ordered, of the output's
        dtype and shape); None unbinds it."""
        self._native.bind_output(name, array)

    def carry(self, output, input_name):
        """After each call, output `output` becomes input `input_name` of the next call."""
        self._native.carry(output, input_name)

    def reset(self):
        """The next call starts again from the carried inputs' initial states."""
        self._native.reset()

    def run(self, input_feed=None, output_names=None, run_options=None):
        """Binds the arrays of `input_feed` (if any), runs once and returns the outputs named in
        `output_names` (all when None), in that order."""
        names = list(output_names) if output_names is not None else None
        return self._native.run(input_feed or {}, names, run_options)

    def output(self, name):
        """Output `name` of the last call."""
        return self._native.output(name)

    @property
    def calls(self):
        """Calls run so far."""
        return self._native.calls


class OrtValue:
    """An output of run_with_iobinding, as onnxruntime's OrtValue gives it (CPU only)."""

    def __init__(self, array):
        self._array = array

    def numpy(self):
        return self._array

    def shape(self):
        return list(self._array.shape)

    def data_ptr(self):
        return self._array.ctypes.data

    def element_type(self):
        return self._array.dtype.type

    def data_type(self):
        name = self._array.dtype.name
        return "tensor(%s)" % {"float32": "float", "float64": "double", "object": "string"}.get(name, name)

    def device_name(self):
        return "cpu"

    def is_tensor(self):
        return True

    def has_value(self):
        return True


def _cpu_only(device_type):
    if str(device_type).lower() != "cpu":
        raise InvalidArgument("Kiln binds CPU memory only, not device '%s'" % device_type)


class IOBinding:
    """onnxruntime's SessionIOBinding over a kiln Stream: inputs and outputs bound once (numpy
    arrays or raw CPU addresses), run with InferenceSession.run_with_iobinding."""

    def __init__(self, session):
        self._native = session._session.open_stream()
        self._inputs = [i.name for i in session.get_inputs()]
        self._outputs = []  # bound output names, in the order bound
        self._ran = False

    def bind_cpu_input(self, name, arr_on_cpu):
        self._native.bind_input(name, arr_on_cpu)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        _cpu_only(device_type)
        self._native.bind_input_address(name, np.dtype(element_type), list(shape), int(buffer_ptr))

    def bind_ortvalue_input(self, name, ortvalue):
        self._native.bind_input(name, ortvalue.numpy() if isinstance(ortvalue, OrtValue) else ortvalue)

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        _cpu_only(device_type)
        if buffer_ptr is None:
            self._native.bind_output(name, None)  # the stream's own buffer
        else:
            if element_type is None or shape is None:
                raise InvalidArgument("output '%s': a buffer_ptr needs its element_type and shape" % name)
            self._native.bind_output_address(name, np.dtype(element_type), list(shape), int(buffer_ptr))
        if name not in self._outputs:
            self._outputs.append(name)

    def bind_ortvalue_output(self, name, ortvalue):
        self._native.bind_output(name, ortvalue.numpy() if isinstance(ortvalue, OrtValue) else ortvalue)
        if name not in self._outputs:
            self._outputs.append(name)

    def clear_binding_inputs(self):
        for name in self._inputs:
            self._native.bind_input(name, None)

    def clear_binding_outputs(self):
        for name in self._outputs:
            self._native.bind_output(name, None)
        self._outputs = []

    def synchronize_inputs(self):
        pass  # CPU memory: nothing to wait for

    def synchronize_outputs(self):
        pass

    def get_outputs(self):
        """The bound outputs of the last run, in the order bound, as OrtValues over Kiln's buffers."""
        return [OrtValue(self._native.output(name)) for name in self._outputs]

    def copy_outputs_to_cpu(self):
        """Copies of the bound outputs of the last run, in the order bound."""
        return [np.array(self._native.output(name), copy=True) for name in self._outputs]

    def _run(self, run_options):
        self._native.run({}, [], run_options)
