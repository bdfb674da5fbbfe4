"""kiln.dask on a local Dask cluster of two worker processes: a signed artifact run block by block
gives the single-process results, a missing or foreign signature fails on the workers, and a worker
killed mid-job has its task retried. Skipped where Debian's python3-distributed is missing."""

import logging
import os
import time

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln

distributed = pytest.importorskip("distributed", reason="Dask distributed (python3-distributed) is not installed")
import dask  # noqa: E402  (after the skip: dask comes with distributed)
import dask.array as da  # noqa: E402
import psutil  # noqa: E402  (a dependency of distributed)

import kiln.dask  # noqa: E402
from conftest import opset_model, save  # noqa: E402

ROWS, FEATURES, OUTPUTS, BLOCKS = 64, 16, 8, 8

# Tornado (under distributed 2022.12) warns of its own event-loop calls.
pytestmark = pytest.mark.filterwarnings("ignore:make_current is deprecated:DeprecationWarning")


@pytest.fixture(scope="module")
def dense_relu(tmp_path_factory):
    """x: float[batch, 16] -> y = Relu(x @ W + b): float[batch, 8], and its weights."""
    rng = np.random.default_rng(11)
    weight = rng.standard_normal((FEATURES, OUTPUTS)).astype(np.float32)
    bias = rng.standard_normal(OUTPUTS).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["z"]),
         helper.make_node("Relu", ["z"], ["y"])],
        "dense_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", FEATURES])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", OUTPUTS])],
        [numpy_helper.from_array(weight, "W"), numpy_helper.from_array(bias, "b")])
    return save(opset_model(graph), tmp_path_factory.mktemp("dask_models"), "dense_relu"), weight, bias


@pytest.fixture(scope="module")
def artifacts(dense_relu, tmp_path_factory):
    """The model compiled three times: signed with `public`'s secret key, unsigned, and signed
    with another key."""
    model, _, _ = dense_relu
    folder = tmp_path_factory.mktemp("dask_artifacts")
    public, secret = kiln.generate_key_pair()
    _, other_secret = kiln.generate_key_pair()
    paths = {"signed": folder / "signed.kiln", "unsigned": folder / "unsigned.kiln", "foreign": folder / "foreign.kiln"}
    kiln.compile(str(model), paths["signed"], sign_key=secret)
    kiln.compile(str(model), paths["unsigned"])
    kiln.compile(str(model), paths["foreign"], sign_key=other_secret)
    return {"public": public, **{name: str(path) for name, path in paths.items()}}


@pytest.fixture(scope="module")
def inputs():
    x = np.random.default_rng(5).standard_normal((ROWS, FEATURES)).astype(np.float32)
    return x, da.from_array(x, chunks=(ROWS // BLOCKS, FEATURES))


def _other_processes():
    """This process's descendants, less multiprocessing's resource tracker (which lives as long
    as this process does)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if not any("resource_tracker" in part for part in child.cmdline()):
                found.append(child)
        except psutil.NoSuchProcess:
            pass
    return found


@pytest.fixture(scope="module")
def client():
    """Two worker processes of one thread each; each worker's death may be retried (the default
    allowed-failures is 3; set here for the record). Every process is gone when the module ends."""
    before = {p.pid for p in _other_processes()}
    with dask.config.set({"distributed.scheduler.allowed-failures": 3}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                           scheduler_port=0, dashboard_address=None, silence_logs=logging.CRITICAL)
        try:
            with distributed.Client(cluster, timeout="60s") as c:
                c.wait_for_workers(2, timeout=60)
                yield c
        finally:
            cluster.close(timeout=30)
    deadline = time.monotonic() + 30
    while [p for p in _other_processes() if p.pid not in before] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [p for p in _other_processes() if p.pid not in before] == []


def _single_process(artifacts, x):
    """The artifact run here, block by block as the workers run it, in one session loaded with its
    signature required."""
    options = kiln.SessionOptions()
    options.public_key, options.require_signature, options.intra_op_num_threads = artifacts["public"], True, 1
    session = kiln.InferenceSession(artifacts["signed"], options)
    step = ROWS // BLOCKS
    return np.concatenate([session.run(["y"], {"x": x[i:i + step]})[0] for i in range(0, ROWS, step)])


def test_blocks_on_two_workers_give_the_single_process_results(client, artifacts, inputs, dense_relu):
    x, blocks = inputs
    y = kiln.dask.map_blocks(blocks, artifacts["signed"], artifacts["public"], "x", "y", row_shape=(OUTPUTS,))
    assert y.numblocks == (BLOCKS, 1) and y.shape == (ROWS, OUTPUTS)
    result = client.compute(y).result(timeout=60)
    expected = _single_process(artifacts, x)
    assert result.dtype == np.float32 and np.array_equal(result, expected)
    _, weight, bias = dense_relu
    np.testing.assert_allclose(result, np.maximum(x @ weight + bias, 0), rtol=1e-5, atol=1e-5)
    # Both workers took blocks, and each loaded the artifact into one session it kept.
    pids = set(client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids
    sessions = client.run(lambda: len(kiln.dask._sessions))
    assert sorted(sessions.values()) == [1, 1]


def test_client_map_over_partitions_and_an_uploaded_artifact(client, artifacts, inputs):
    x, _ = inputs
    uploaded = kiln.dask.upload_artifact(client, artifacts["signed"])
    parts = np.array_split(x, BLOCKS)
    futures = client.map(kiln.dask.run_block, parts, artifact_path=uploaded, public_key=artifacts["public"],
                         input_name="x", output_name="y")
    result = np.concatenate(client.gather(futures))
    assert np.array_equal(result, _single_process(artifacts, x))
    where = client.run(lambda: uploaded.path())
    assert all(path.endswith("-signed.kiln") and "kiln-artifacts" in path for path in where.values())


@pytest.mark.parametrize("artifact, message", [("unsigned", "artifact is unsigned"),
                                               ("foreign", "artifact signature: signed by [0-9a-f]+, not by the given public key")])
def test_workers_require_the_signature(client, artifacts, inputs, artifact, message):
    _, blocks = inputs
    y = kiln.dask.map_blocks(blocks, artifacts[artifact], artifacts["public"], "x", "y", row_shape=(OUTPUTS,))
    with pytest.raises(kiln.IntegrityFailure, match=message):  # raised on a worker, re-raised here
        client.compute(y).result(timeout=60)


def test_no_session_loads_without_a_public_key(artifacts, inputs):
    _, blocks = inputs
    with pytest.raises(kiln.InvalidArgument, match="public_key"):
        kiln.dask.map_blocks(blocks, artifacts["signed"], b"", "x", "y", row_shape=(OUTPUTS,))


def _exit_once_then_run(block, marker, block_id=None, **run):
    """kiln.dask.run_block, except that the first run of block 3 ends its worker process. (The
    workers import it from this module: spawned processes start with this one's sys.path.)"""
    if block_id[0] == 3:
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            pass  # the retry
        else:
            os._exit(1)
    return kiln.dask.run_block(block, **run)


def test_a_worker_killed_mid_job_has_its_task_retried(client, artifacts, inputs, tmp_path):
    x, blocks = inputs
    pids_before = set(client.run(os.getpid).values())
    marker = tmp_path / "worker-exited"
    y = da.map_blocks(_exit_once_then_run, blocks, marker=str(marker), artifact_path=artifacts["signed"],
                      public_key=artifacts["public"], input_name="x", output_name="y", dtype=np.float32,
                      chunks=(blocks.chunks[0], (OUTPUTS,)))
    result = client.compute(y).result(timeout=60)
    assert marker.exists()  # a worker did end mid-job
    assert np.array_equal(result, _single_process(artifacts, x))
    client.wait_for_workers(2, timeout=60)  # its nanny starts it again
    assert set(client.run(os.getpid).values()) != pids_before
