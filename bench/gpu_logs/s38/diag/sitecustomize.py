# Diagnostic only (session 38): a process still running after $DIAG_AFTER seconds dumps all its threads' stacks to
# $DIAG_DIR (the parent by faulthandler's watchdog thread; a forked child, which has no such thread, by SIGALRM).
import faulthandler, os, signal
_dir = os.environ.get("DIAG_DIR")
if _dir:
    _after = float(os.environ.get("DIAG_AFTER", "20"))
    _handle = open(os.path.join(_dir, f"stacks_{os.getpid()}.txt"), "w")
    faulthandler.dump_traceback_later(_after, repeat=False, file=_handle, exit=False)

    def _in_child():
        global _handle
        _handle = open(os.path.join(_dir, f"child_stacks_{os.getpid()}.txt"), "w")
        faulthandler.register(signal.SIGALRM, file=_handle, all_threads=True, chain=False)
        signal.alarm(int(_after))

    os.register_at_fork(after_in_child=_in_child)
