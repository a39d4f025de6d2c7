"""``streamlearn`` exits normally after freezing the garbage collector (cli.main.entry_point): output, exit
codes, written files and atexit handlers are those of a normal exit, and teardown is cheap."""

import json
import signal
import subprocess
import sys

import pytest

from streamlearn.persist import load


def _cli(*args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "streamlearn", *args], capture_output=True, text=True, timeout=300, **kw
    )


def test_output_model_and_exit_codes(tmp_path):
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{1 if i % 3 else -1} 1:{i % 5}.5 {2 + i % 7}:1\n" for i in range(200)))
    model = tmp_path / "m.slm"
    res = _cli("train", str(data), "-l", "ftrl", "--json", "-o", str(model))
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["n_train"] == 200  # the whole line reached the pipe
    assert load(model).t_ == 200
    # atexit handlers still run before the process ends
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('atexit ran', file=sys.stderr))\n"
        "sys.argv = ['streamlearn', 'learners']\n"
        "from streamlearn.cli.main import entry_point\n"
        "entry_point()\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and "atexit ran" in res.stderr and "ftrl" in res.stdout
    res = _cli("train", str(tmp_path / "missing.svm"), "-l", "ftrl")
    assert res.returncode == 2 and "does not exist" in res.stderr


def test_closed_pipe_is_not_an_error(tmp_path):
    """`streamlearn predict ... | head`: more output than a pipe buffer holds, the reader closes early."""
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{1 if i % 3 else -1} 1:{i % 5}.5 {2 + i % 7}:1\n" for i in range(30_000)))
    model = tmp_path / "m.slm"
    assert _cli("train", str(data), "-l", "ftrl", "-o", str(model), "--quiet").returncode == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlearn", "predict", str(model), str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.read(10)
    proc.stdout.close()
    _, err = proc.communicate(timeout=300)
    # reported as one line with a non-zero exit (docs/user-guide/errors.md), never a traceback
    assert proc.returncode == 2 and b"Traceback" not in err and err.count(b"\n") == 1, err.decode()
    assert b"broken pipe" in err


def test_exit_is_normal_and_teardown_is_cheap():
    """entry_point ends through sys.exit (no os._exit): a finally block and a late atexit handler run, and
    the interpreter teardown after main() skips the full garbage collections (gc.freeze)."""
    code = (
        "import atexit, gc, sys, time\n"
        "import streamlearn.cli.main as m\n"
        "sys.argv = ['streamlearn', 'learners']\n"
        "orig = m.main\n"
        "def main():\n"
        "    code = orig()\n"
        "    atexit.register(lambda: print('frozen', gc.get_freeze_count() > 1000, file=sys.stderr))\n"
        "    return code\n"
        "m.main = main\n"
        "try:\n"
        "    m.entry_point()\n"
        "finally:\n"
        "    print('finally ran', file=sys.stderr)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "finally ran" in res.stderr and "frozen True" in res.stderr and "pa1" in res.stdout


def test_ctrl_c_inside_a_callback_from_c_still_stops_the_command(monkeypatch, capsys):
    """A Ctrl-C that arrives while C code calls back into Python (numba's compiler does) is "ignored" by
    Python, printed with a traceback; the command must still stop with its one-line message and 130."""
    import ctypes
    import time

    from streamlearn.cli import learners_cmd
    from streamlearn.cli.main import main

    def interrupted_in_a_callback(args):
        @ctypes.CFUNCTYPE(None)
        def callback():
            raise KeyboardInterrupt

        callback()  # the interrupt lands in the callback, as in numba's code generation
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the rest of a long compilation
            time.sleep(0.01)
        return 0

    monkeypatch.setattr(learners_cmd, "run", interrupted_in_a_callback)
    hook = sys.unraisablehook
    assert main(["learners"]) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["streamlearn: error: interrupted"], err
    assert sys.unraisablehook is hook  # put back


def test_ctrl_c_inside_a_constructor_leaves_no_traceback_from_its_destructor(monkeypatch, capsys):
    """A Ctrl-C inside a library's ``__init__`` (llvmlite's, while numba loads a kernel) leaves an object whose
    ``__del__`` fails when it is freed: after the one-line message, nothing else is printed."""
    from streamlearn.cli import learners_cmd
    from streamlearn.cli.main import main

    class HalfBuilt:
        def __init__(self):
            self.ptr = object()
            raise KeyboardInterrupt  # before self.owned is set
            self.owned = True  # noqa: B018 (never reached)

        def __del__(self):
            if self.owned:  # AttributeError, which Python reports through sys.unraisablehook
                pass

    def interrupted_in_a_constructor(args):
        HalfBuilt()

    monkeypatch.setattr(learners_cmd, "run", interrupted_in_a_constructor)
    monkeypatch.setattr(sys, "unraisablehook", sys.__unraisablehook__)  # Python's, which prints (not pytest's)
    hook = sys.unraisablehook
    assert main(["learners"]) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["streamlearn: error: interrupted"], err
    assert sys.unraisablehook is hook


def test_a_pending_redelivery_of_ctrl_c_is_dropped_once_the_command_has_ended():
    """The re-delivery of a Ctrl-C that landed in a C callback comes a moment later: if the command ended (or
    stopped on another interrupt) in between, it must not interrupt what runs next."""
    import time
    from types import SimpleNamespace

    from streamlearn.cli.main import _interrupt_again_hook

    hook = _interrupt_again_hook(lambda info: None)
    hook(SimpleNamespace(exc_type=KeyboardInterrupt))  # schedules the re-delivery
    hook.ended = True
    try:
        time.sleep(0.3)
    except KeyboardInterrupt:
        pytest.fail("the re-delivered Ctrl-C interrupted the code after the command")


def test_an_interrupt_arriving_after_the_command_does_not_change_the_exit(tmp_path):
    # a Ctrl-C re-delivered by the command's hook just as it ends lands in the teardown: the exit code stays the
    # command's, and nothing is printed
    patch = (
        "import threading, _thread\n"
        "import streamlearn.cli.main as m\n"
        "def fake_main():\n"
        "    threading.Timer(0.05, _thread.interrupt_main).start()\n"
        "    return 0\n"
        "m.main = fake_main\n"
    )
    assert _entry_point_after(patch) == (0, "")


def _entry_point_after(patch):
    """``(exit code, standard error)`` of a fresh interpreter that runs ``patch``, then the command's entry point."""
    code = patch + "import streamlearn.cli.main\nstreamlearn.cli.main.entry_point()\n"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    return res.returncode, res.stderr


@pytest.mark.parametrize("kind", ["ctrl-c", "sigterm"])
def test_one_ctrl_c_reported_twice_is_re_delivered_once(monkeypatch, kind):
    """... as the signal it came from: a SIGTERM (Terminated) inside a callback is delivered again as SIGTERM."""
    import _thread
    import signal
    import time
    from types import SimpleNamespace

    from streamlearn._signals import Terminated
    from streamlearn.cli import main as cli_main

    calls = []
    monkeypatch.setattr(_thread, "interrupt_main", lambda signum=signal.SIGINT: calls.append(signum))
    hook = cli_main._interrupt_again_hook(lambda info: None)
    info = SimpleNamespace(exc_type=KeyboardInterrupt if kind == "ctrl-c" else Terminated)
    hook(info)
    hook(info)  # the same Ctrl-C, reported again by another callback it crossed
    time.sleep(0.2)
    assert calls == [signal.SIGINT if kind == "ctrl-c" else signal.SIGTERM]


def test_sigterm_while_the_model_is_written_removes_the_temporary_file(tmp_path):
    """A SIGTERM (kill, timeout, a service manager) ended the process at once: arriving while the model was
    written aside, it left the hidden temporary file (as large as the model) in the folder for ever. It is now
    handled as a Ctrl-C: the temporary file is removed, the old model stays, one line says so, and the process
    then ends by SIGTERM as before."""
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{1 if i % 3 else -1} 1:{i % 5}.5 {2 + i % 7}:1\n" for i in range(50)))
    out = tmp_path / "m.slm"
    out.write_bytes(b"old model")
    patch = (
        "import contextlib, os, signal, sys\n"
        "from streamlearn import _atomic\n"
        "written = _atomic.Output.path_for_writing\n"
        "@contextlib.contextmanager\n"
        "def terminated_after_writing(self, suffix=''):\n"
        "    with written(self, suffix) as tmp:\n"
        "        yield tmp\n"
        "        os.kill(os.getpid(), signal.SIGTERM)  # the model is in the temporary file, not renamed yet\n"
        "        signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the signal is handled by the next bytecode\n"
        "_atomic.Output.path_for_writing = terminated_after_writing\n"
        f"sys.argv = ['streamlearn', 'train', {str(data)!r}, '-l', 'pa', '--quiet', '-o', {str(out)!r}]\n"
    )
    code, err = _entry_point_after(patch)
    assert code == -signal.SIGTERM
    assert err == f"streamlearn: error: terminated; {out} left unchanged\n"
    assert out.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.svm", "m.slm"]


def test_an_interrupt_wrapped_by_python_is_still_an_interrupt(monkeypatch, capsys):
    from types import SimpleNamespace

    from streamlearn.cli import main as cli_main

    def run(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:  # what Python does to a Ctrl-C inside a class body's __set_name__
            raise RuntimeError("Error calling __set_name__") from exc

    class Parser:
        def parse_args(self, argv):
            return SimpleNamespace(func=run)

    monkeypatch.setattr(cli_main, "build_parser", lambda: Parser())
    assert cli_main.main(["train"]) == 130
    assert capsys.readouterr().err == "streamlearn: error: interrupted\n"


def test_an_interrupt_caught_after_escaping_code_run_from_a_string_still_exits_130(tmp_path):
    # dataclasses and scipy.sparse run code from strings while they import: a Ctrl-C escaping there, caught by the
    # command, must not make Python end the process by SIGINT instead of with 130 (as `python -m streamlearn`)
    import os

    package = tmp_path / "interrupted_cli"
    package.mkdir()
    (package / "__main__.py").write_text(
        "import streamlearn.cli.main as m\n"
        "def fake_main():\n"
        "    try:\n"
        "        exec('raise KeyboardInterrupt')\n"
        "    except KeyboardInterrupt:\n"
        "        return 130\n"
        "m.main = fake_main\n"
        "m.entry_point()\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tmp_path), env.get("PYTHONPATH", "")) if p)
    res = subprocess.run(
        [sys.executable, "-m", "interrupted_cli"], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    assert (res.returncode, res.stderr) == (130, "")


@pytest.mark.skipif(not hasattr(__import__("signal"), "pthread_kill"), reason="POSIX signals")
def test_numpy_scipy_sparse_and_numba_are_imported_with_ctrl_c_held_back(monkeypatch):
    """A Ctrl-C while each module imports (here: sent to the main thread as the import starts) is raised once the
    import is over, never inside it."""
    import signal
    import threading

    from streamlearn.cli import _deferred

    imported = []

    def record(name):
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        module = __import__(name)
        for _ in range(10_000):  # bytecode boundaries, where Python would raise it
            pass
        imported.append(name)
        return module

    monkeypatch.setattr(_deferred, "_active", True)
    monkeypatch.setattr(_deferred, "_numeric", False)
    monkeypatch.setattr(_deferred.importlib, "import_module", record)
    monkeypatch.setattr(_deferred, "defer_imports", lambda names: [])
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            _deferred.before_numeric_command()  # the command is chosen: numpy
        assert imported == ["numpy"]
        for name in ("scipy.sparse", "numba"):  # its arguments are parsed (not --help)
            with pytest.raises(KeyboardInterrupt):
                _deferred.import_shielded(name)
        assert imported == ["numpy", "scipy.sparse", "numba"]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_in_the_first_import_of_the_command_is_the_one_line(monkeypatch, capsys):
    import types

    from streamlearn.cli import main as cli_main

    class Interrupted(types.ModuleType):
        def __getattr__(self, name):  # the Ctrl-C lands while the module is being imported
            raise KeyboardInterrupt

    monkeypatch.setitem(sys.modules, "streamlearn._atomic", Interrupted("streamlearn._atomic"))
    assert cli_main.main(["learners"]) == 130
    assert capsys.readouterr().err == "streamlearn: error: interrupted\n"


def test_a_ctrl_c_before_the_command_starts_is_the_one_line():
    patch = (
        "import streamlearn.cli._deferred as d\n"
        "def interrupted():\n"
        "    raise KeyboardInterrupt\n"
        "d.activate = interrupted\n"
    )
    assert _entry_point_after(patch) == (130, "streamlearn: error: interrupted\n")


def test_no_garbage_collection_while_the_command_imports_and_the_collector_is_back_for_the_command(tmp_path):
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{1 if i % 3 else -1} 1:{i % 5}.5 {2 + i % 7}:1\n" for i in range(50)))
    patch = (
        "import atexit, gc, sys\n"
        "import streamlearn.cli._deferred as d\n"
        "runs = []\n"
        "gc.callbacks.append(lambda phase, info: runs.append(info['generation']) if phase == 'start' else None)\n"
        "state = {}\n"
        "activate, enable = d.activate, gc.enable\n"
        "def activated():\n"
        "    state['start'] = len(runs)\n"
        "    return activate()\n"
        "def enabled():\n"
        "    state.setdefault('imported', (len(runs) - state['start'], gc.get_freeze_count() > 10000, 'numba' in sys.modules))\n"
        "    enable()\n"
        "d.activate, gc.enable = activated, enabled\n"
        "atexit.register(lambda: print(state['imported'], gc.isenabled(), file=sys.stderr))\n"
        f"sys.argv = ['streamlearn', 'train', {str(data)!r}, '-l', 'pa', '--quiet']\n"
    )
    # no collection from activate() to the end of the imports (numba's included), which are then frozen out of
    # the collections; the command itself runs with the collector on
    assert _entry_point_after(patch) == (0, "(0, True, True) True\n")


def _discarded_ctrl_c():
    """A Ctrl-C whose KeyboardInterrupt a library discards (raised inside a callback that swallows every error)."""
    import contextlib

    with contextlib.suppress(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)


def test_a_ctrl_c_a_library_discarded_stops_predict_at_the_next_chunk(
    command_line_handlers, tmp_path, monkeypatch, capsys
):
    from streamlearn.cli import main as cli
    from streamlearn.cli import predict_cmd

    data, model, out = tmp_path / "d.svm", tmp_path / "m.slm", tmp_path / "OUT"
    data.write_text("".join(f"{1 if i % 3 else -1} 1:{i % 5}.5 {2 + i % 7}:1\n" for i in range(200)))
    assert cli.main(["train", str(data), "-l", "pa1", "-o", str(model), "--quiet"]) == 0
    out.write_text("previous\n")
    lines = predict_cmd._lines
    chunks = []

    def interrupted(model, X, mode):
        chunks.append(X.shape[0])
        if len(chunks) == 1:
            _discarded_ctrl_c()
        return lines(model, X, mode)

    monkeypatch.setattr(predict_cmd, "_lines", interrupted)
    capsys.readouterr()
    assert cli.main(["predict", str(model), str(data), "-o", str(out), "--chunk-size", "50"]) == 130
    assert capsys.readouterr().err == f"streamlearn: error: interrupted; {out} left unchanged\n"
    assert chunks == [50]  # stopped before the second chunk
    assert out.read_text() == "previous\n" and sorted(p.name for p in tmp_path.iterdir()) == ["OUT", "d.svm", "m.slm"]


@pytest.mark.parametrize("output", ["file", "standard output"])
def test_a_ctrl_c_a_library_discarded_before_the_data_stops_train(
    command_line_handlers, tmp_path, monkeypatch, capsys, output
):
    """Discarded before the first chunk is read: no example is learnt, no model written, exit 130 (also when
    the command writes no file: it does not end as if no Ctrl-C had come)."""
    from streamlearn.cli import main as cli
    from streamlearn.cli import train_cmd

    data, model = tmp_path / "d.svm", tmp_path / "m.slm"
    data.write_text("".join(f"{1 if i % 3 else -1} 1:{i % 5}.5 {2 + i % 7}:1\n" for i in range(200)))
    make = train_cmd.make_learner

    def interrupted(*args, **kwargs):
        _discarded_ctrl_c()
        return make(*args, **kwargs)

    monkeypatch.setattr(train_cmd, "make_learner", interrupted)
    argv = ["train", str(data), "-l", "pa1", "--json"] + (["-o", str(model)] if output == "file" else [])
    assert cli.main(argv) == 130
    captured = capsys.readouterr()
    assert captured.out == ""  # no report: nothing was learnt
    left = f"; {model} left unchanged" if output == "file" else ""
    assert captured.err == f"streamlearn: error: interrupted{left}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.svm"]


def test_a_ctrl_c_while_a_command_module_imports_is_raised_after_the_import(command_line_handlers, monkeypatch, capsys):
    """A KeyboardInterrupt inside the import of an extension module can turn into that module's ImportError (a
    traceback); the command's modules import with Ctrl-C held back, and it is the one line afterwards."""
    import importlib
    import threading

    from streamlearn.cli import main as cli

    real = importlib.import_module
    imported = []

    def import_module(name, *args):
        if name.endswith("predict_cmd") and not imported:
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            for _ in range(10_000):  # bytecode boundaries, where Python would raise it
                pass
            imported.append(name)
        return real(name, *args)

    monkeypatch.setattr(cli.importlib, "import_module", import_module)
    assert cli.main(["predict", "model.slm", "data.svm"]) == 130
    assert imported == ["streamlearn.cli.predict_cmd"]
    assert capsys.readouterr().err == "streamlearn: error: interrupted\n"


def test_a_ctrl_c_discarded_while_the_command_line_loads_stops_the_command(tmp_path):
    """Python reports and discards a KeyboardInterrupt raised in its import system's weak-reference callbacks; one
    that lands there while the command line loads must still stop the command (exit 130, the output as it was)."""
    data, out = tmp_path / "d.svm", tmp_path / "OUT"
    data.write_text("".join(f"{1 if i % 3 else -1} 1:{i % 5}.5 {2 + i % 7}:1\n" for i in range(200)))
    out.write_text("previous\n")
    code = (
        "import contextlib, signal, sys\n"
        f"sys.argv = ['streamlearn', 'train', {str(data)!r}, '-l', 'pa1', '-o', {str(out)!r}]\n"
        "from streamlearn.__main__ import entry_point\n"  # what the streamlearn script runs
        "with contextlib.suppress(KeyboardInterrupt):\n"
        "    signal.raise_signal(signal.SIGINT)\n"  # raised, then discarded as in such a callback
        "entry_point()\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 130, res.stderr
    assert res.stderr == f"streamlearn: error: interrupted; {out} left unchanged\n"
    assert out.read_text() == "previous\n" and sorted(p.name for p in tmp_path.iterdir()) == ["OUT", "d.svm"]


@pytest.mark.parametrize("raised_by_a_check", [False, True])
def test_a_reported_interrupt_is_sent_again_unless_a_check_raised_it_meanwhile(
    command_line_handlers, monkeypatch, raised_by_a_check
):
    """An interrupt Python only reported (raised in a callback from compiled code) is sent again a moment later;
    not when a check raised it meanwhile: the second one would land in the clean-up the first one started."""
    import _thread
    import contextlib
    import time
    import types

    from streamlearn.cli import main as cli

    sent = []
    monkeypatch.setattr(_thread, "interrupt_main", lambda *a: sent.append(a))
    hook = cli._interrupt_again_hook(lambda info: None)
    with contextlib.suppress(KeyboardInterrupt):  # raised, remembered, then discarded
        signal.raise_signal(signal.SIGINT)
    hook(types.SimpleNamespace(exc_type=KeyboardInterrupt))  # and reported
    if raised_by_a_check:
        with pytest.raises(KeyboardInterrupt):
            command_line_handlers.raise_if_interrupted()
    time.sleep(0.2)
    assert sent == ([] if raised_by_a_check else [(signal.SIGINT,)])


# the command line; its start-up, before the command; the command's first import
@pytest.mark.parametrize("module", ["streamlearn.cli.main", "streamlearn.cli._deferred", "streamlearn._atomic"])
def test_a_ctrl_c_in_a_callback_of_the_import_system_as_the_command_line_starts_is_the_one_line(tmp_path, module):
    """Ctrl-C handled inside a weak-reference callback of the import system (where Python prints a raised exception
    as ignored, with its traceback) while ``python -m streamlearn`` imports the command line, sets up its start-up
    and starts the command: one line, exit 130."""
    data, out = tmp_path / "d.svm", tmp_path / "OUT"
    data.write_text("1 1:1\n-1 2:1\n")
    out.write_text("previous\n")
    code = (
        "import runpy, signal, sys, weakref\n"
        f"sys.argv = ['streamlearn', 'train', {str(data)!r}, '-l', 'pa1', '-o', {str(out)!r}]\n"
        "class Trigger:\n"
        "    pass\n"
        "box = [Trigger()]\n"
        "weakref.finalize(box[0], signal.raise_signal, signal.SIGINT)\n"  # Ctrl-C handled in the callback
        "class Finder:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r} and box:\n"
        "            box.pop()\n"
        "        return None\n"
        "sys.meta_path.insert(0, Finder())\n"
        "runpy.run_module('streamlearn', run_name='__main__')\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 130
    assert res.stderr in (
        "streamlearn: error: interrupted\n",
        f"streamlearn: error: interrupted; {out} left unchanged\n",
    )
    assert out.read_text() == "previous\n"
