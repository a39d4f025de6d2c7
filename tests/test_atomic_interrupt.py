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


def test_a_writer_stopped_between_enter_and_its_block_leaves_no_file_after_the_command(tmp_path, monkeypatch, capsys):
    """A Ctrl-C in the few bytecodes between ``__enter__`` returning the temporary path and the ``with`` block
    starting leaves the writer suspended, its file on disk (here: kept suspended by a reference, as a traceback
    can keep it). The command line removes what is left as it reports the interrupt; the destination is as it
    was."""
    from streamlearn.cli import main as cli

    out_path = tmp_path / "OUT"
    out_path.write_text("previous\n")
    suspended = []

    def command(argv):
        writer = _atomic.Output(out_path).path_for_writing()
        tmp = writer.__enter__()
        suspended.append((writer, tmp))
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_run", command)
    assert cli.main([]) == 130
    assert suspended and not __import__("os").path.exists(suspended[0][1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["OUT"] and out_path.read_text() == "previous\n"
    assert capsys.readouterr().err.strip() == f"streamlearn: error: interrupted; {out_path} left unchanged"
