"""A Ctrl-C while an output's temporary file is created leaves no file behind (streamlearn._atomic)."""

import signal

import pytest

from streamlearn import _atomic

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")


@pytest.mark.parametrize("through", [False, True])
def test_ctrl_c_right_after_the_temporary_file_exists_leaves_nothing(tmp_path, monkeypatch, through):
    created = []
    temporary = _atomic._temporary

    def interrupted(**kwargs):
        tmp = temporary(**kwargs)
        created.append(tmp)
        signal.raise_signal(signal.SIGINT)  # Ctrl-C the moment the file exists, before its path is returned
        return tmp

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        out = _atomic.Output(tmp_path / "OUT")
        monkeypatch.setattr(_atomic, "_temporary", interrupted)  # (after the folder's probe, tested below)
        if through:
            out.through = True  # written through (a device or FIFO): the temporary file is in the temp folder
        with pytest.raises(KeyboardInterrupt), out.path_for_writing() as tmp:
            raise AssertionError(f"the block ran with {tmp}")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert created and not any(__import__("os").path.exists(p) for p in created)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_ctrl_c_while_the_folder_is_probed_leaves_nothing(tmp_path, monkeypatch):
    """The output's folder is probed with a file created and removed when the output is announced (the
    permission bits say nothing of a read-only file system): a Ctrl-C then is raised once the file is gone."""
    created = []
    temporary = _atomic._temporary

    def interrupted(**kwargs):
        tmp = temporary(**kwargs)
        created.append(tmp)
        signal.raise_signal(signal.SIGINT)
        return tmp

    monkeypatch.setattr(_atomic, "_temporary", interrupted)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            _atomic.Output(tmp_path / "OUT")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(created) == 1 and sorted(p.name for p in tmp_path.iterdir()) == []
