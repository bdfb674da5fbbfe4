"""Runs from several Python threads at once (the GIL is released while Kiln runs), and
RunOptions: a tag in errors, terminate ending a run with kiln.Cancelled."""

import threading

import numpy as np
import pytest

import kiln


def test_threads_running_one_session_get_the_serial_results(models):
    options = kiln.SessionOptions()
    options.max_concurrent_runs = 3
    session = kiln.InferenceSession(str(models["two_outputs"]), options)
    rng = np.random.default_rng(3)
    feeds = [{"x": rng.standard_normal((n, 3)).astype(np.float32), "y": rng.standard_normal((n, 3)).astype(np.float32)}
             for n in (1, 2, 5)]
    serial = [session.run(None, f) for f in feeds]
    mismatches = []

    def work(offset):
        for r in range(100):
            k = (r + offset) % len(feeds)
            got = session.run(None, feeds[k])
            if not all(np.array_equal(a, b) for a, b in zip(got, serial[k])):
                mismatches.append(k)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mismatches == []
    execution = session.report()["execution"]
    assert execution["max_concurrent_runs"] == 3
    assert 1 <= execution["lanes"] <= 3


def test_terminate_cancels_and_names_the_run(models, xy):
    x, y = xy
    session = kiln.InferenceSession(str(models["two_outputs"]))
    options = kiln.RunOptions()
    options.logid = "request-5"
    options.terminate = True
    with pytest.raises(kiln.Cancelled, match="request-5"):
        session.run(None, {"x": x, "y": y}, options)
    options.terminate = False
    options.threads = 1
    np.testing.assert_array_equal(session.run(["sum"], {"x": x, "y": y}, options)[0], x + y)
