"""Batch inference with a signed Kiln artifact on a Dask cluster (docs/PYTHON.md, "Batch inference
on a Dask cluster"; tests/python/test_dask.py).

    import kiln.dask
    y = kiln.dask.map_blocks(x, "/shared/model.kiln", public_key, "x", "y", row_shape=(8,))
    y.compute()   # on the client's cluster

Each worker process loads the artifact once (`worker_session`), with its signature required and
made with `public_key`, and runs every block it is given through that one session (`run_block`).
Only `import kiln.dask` imports dask and distributed; `import kiln` does not.
"""

import hashlib
import os
import threading

import dask.array
import distributed
import numpy as np

from .errors import InvalidArgument
from .options import SessionOptions
from .session import InferenceSession

_sessions = {}  # (path, public key, threads) -> (the file's identity when loaded, session)
_sessions_lock = threading.Lock()


def _checked_key(public_key):
    """The public key as 32 raw bytes; a session here never loads without one."""
    key = bytes(public_key or b"")
    if len(key) != 32:
        raise InvalidArgument("public_key: a raw Ed25519 public key (32 bytes) is required, got %d bytes" % len(key))
    return key


def worker_session(artifact_path, public_key, intra_op_num_threads=1):
    """This process's InferenceSession for the artifact at `artifact_path` (a path, or what
    `upload_artifact` returned), loaded on first use with the signature required and made with
    `public_key` (32 raw bytes): kiln.IntegrityFailure if it is unsigned or signed with another key.
    Later calls (any thread) get the same session, until the file at that path changes."""
    if isinstance(artifact_path, WorkerArtifact):
        artifact_path = artifact_path.path()
    path = os.path.abspath(os.fspath(artifact_path))
    key = (path, _checked_key(public_key), int(intra_op_num_threads))
    stat = os.stat(path)
    identity = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    with _sessions_lock:
        cached = _sessions.get(key)
        if cached is None or cached[0] != identity:
            options = SessionOptions()
            options.public_key = key[1]
            options.require_signature = True
            options.intra_op_num_threads = key[2]
            _sessions[key] = (identity, InferenceSession(path, options))
        return _sessions[key][1]


def run_block(block, artifact_path, public_key, input_name, output_name, intra_op_num_threads=1):
    """Runs one block (a numpy array holding a batch of rows) through this process's session for
    the artifact and returns the output `output_name`. Usable with client.submit / client.map."""
    session = worker_session(artifact_path, public_key, intra_op_num_threads)
    return session.run([output_name], {input_name: block})[0]


def map_blocks(array, artifact_path, public_key, input_name, output_name, row_shape, dtype=np.float32,
               intra_op_num_threads=1):
    """A lazy dask array: `array` (a dask array whose axis 0 is the model input's batch dimension)
    run block by block through the artifact. `row_shape`: the output's shape after its batch
    dimension (the model's output is [batch, *row_shape]); `dtype`: the output's dtype. Blocks stay
    split along axis 0 as they are and are joined along every other axis. Compute it with a
    distributed.Client's cluster; each worker process loads the artifact once."""
    _checked_key(public_key)
    array = array.rechunk({axis: -1 for axis in range(1, array.ndim)})
    row_shape = tuple(int(d) for d in row_shape)
    out_ndim = 1 + len(row_shape)
    return dask.array.map_blocks(
        run_block, array, artifact_path=artifact_path, public_key=bytes(public_key), input_name=input_name,
        output_name=output_name, intra_op_num_threads=intra_op_num_threads, dtype=dtype,
        chunks=(array.chunks[0],) + tuple((d,) for d in row_shape),
        drop_axis=list(range(out_ndim, array.ndim)), new_axis=list(range(array.ndim, out_ndim)))


class WorkerArtifact:
    """An artifact `upload_artifact` copied into each worker's local directory: `path()`, on a
    worker, is where it lies there."""

    def __init__(self, name):
        self.name = name

    def path(self):
        return os.path.join(distributed.get_worker().local_directory, "kiln-artifacts", self.name)

    def __repr__(self):
        return "WorkerArtifact(%r)" % self.name


class _ArtifactUpload(distributed.WorkerPlugin):
    """Writes the artifact's bytes into each worker's local directory as the worker starts (so
    workers that join or restart later get it too)."""

    def __init__(self, name, data):
        self.name = name
        self.data = data

    def setup(self, worker):
        folder = os.path.join(worker.local_directory, "kiln-artifacts")
        os.makedirs(folder, exist_ok=True)
        partial = os.path.join(folder, self.name + ".partial")
        with open(partial, "wb") as f:
            f.write(self.data)
        os.replace(partial, os.path.join(folder, self.name))


def upload_artifact(client, artifact_path):
    """Sends the artifact at `artifact_path` (on the client) to every worker of `client`'s cluster,
    present and future, for clusters without shared storage; returns the WorkerArtifact to pass as
    `artifact_path`. The bytes travel through the scheduler, which keeps them: for small and
    medium artifacts. Workers still check the signature on load."""
    with open(os.fspath(artifact_path), "rb") as f:
        data = f.read()
    name = "%s-%s" % (hashlib.sha256(data).hexdigest()[:16], os.path.basename(os.fspath(artifact_path)))
    client.register_worker_plugin(_ArtifactUpload(name, data), name="kiln-artifact-" + name)
    return WorkerArtifact(name)
