# Session 40, call 5: the diagnosis marks (../diag/sitecustomize.py), and the scan helper's shared arrays left
# unlocked (uploads staged by the driver instead of page-locking 312 MB before the call).
import os

exec(open(os.path.join(os.path.dirname(__file__), "..", "diag", "sitecustomize.py")).read())
import seqcompare.cuda.helper  # noqa: E402

seqcompare.cuda.helper.LOCK_SHARED_FROM = 1 << 62
