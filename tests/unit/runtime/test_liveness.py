"""Whether an owner or task process lives, as the reconciler and a task process judge it."""

from __future__ import annotations

import os
import subprocess
import sys

from etl_craft.runtime.identity import HOST, ProcessIdentity, alive_here, process_start


def test_a_process_that_exited_but_was_not_reaped_is_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    start = process_start(child.pid)
    assert start is not None
    identity = ProcessIdentity(HOST, child.pid, start)
    try:
        # Wait for its exit while leaving it unreaped: a zombie, as a worker whose parent has
        # not yet waited for it is.
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)

        assert process_start(child.pid) == start
        assert alive_here(identity) is False
    finally:
        child.wait()


def test_a_running_process_is_alive_and_one_on_another_host_is_unknown() -> None:
    me = ProcessIdentity(HOST, os.getpid(), process_start(os.getpid()) or "")

    assert alive_here(me) is True
    assert alive_here(ProcessIdentity(f"not-{HOST}", me.pid, me.start)) is None
