"""Numba's on-disk cache shared by processes that compile at the same time (pytest -n, Dask workers)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")

KERNELS = """
from seqcompare._jit import jit


@jit
def twice_plus_one(x):
    return x * 2 + 1
"""

# One compiling process, with Numba's save slowed so that the two processes interleave as they can: both read
# the empty index, both take data file 1; "int" writes the index first and its data last, "float" in between.
# The index then ends up with float's key and the data file with int's machine code.
COMPILE = """
import os, sys, time
from numba.core import caching

role, directory = sys.argv[1], sys.argv[2]
other = {"int": "float", "float": "int"}[role]
index_pause, data_pause = {"int": (0.2, 0.8), "float": (0.5, 0.0)}[role]
cache_file = caching.IndexDataCacheFile
save, save_index, save_data = cache_file.save, cache_file._save_index, cache_file._save_data


def meet_then_save(self, key, data):
    # Both processes start saving together; a process held back by a lock waits 3 s at most.
    open(os.path.join(directory, "ready-" + role), "w").close()
    deadline = time.time() + 3
    while not os.path.exists(os.path.join(directory, "ready-" + other)) and time.time() < deadline:
        time.sleep(0.01)
    return save(self, key, data)


def slow_save_index(self, overloads):
    time.sleep(index_pause)
    return save_index(self, overloads)


def slow_save_data(self, name, data):
    time.sleep(data_pause)
    return save_data(self, name, data)


cache_file.save, cache_file._save_index, cache_file._save_data = meet_then_save, slow_save_index, slow_save_data
sys.path.insert(0, directory)
import kernels

print(kernels.twice_plus_one(3 if role == "int" else 1.5))
"""

LOAD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import kernels

values = [kernels.twice_plus_one(3), kernels.twice_plus_one(1.5)]
print(json.dumps({"values": values, "cache_hits": sum(kernels.twice_plus_one.stats.cache_hits.values())}))
"""


def test_two_processes_compiling_one_kernel_at_once_leave_a_consistent_cache(tmp_path):
    (tmp_path / "kernels.py").write_text(textwrap.dedent(KERNELS))
    env = {key: value for key, value in os.environ.items() if key != "SEQCOMPARE_DISABLE_NUMBA_CACHE"}
    env.pop("NUMBA_CACHE_DIR", None)  # the cache goes beside kernels.py, in tmp_path
    compiling = [subprocess.Popen([sys.executable, "-c", COMPILE, role, str(tmp_path)], env=env,
                                  stdout=subprocess.PIPE, text=True) for role in ("int", "float")]  # fmt: skip
    outputs = [process.communicate(timeout=120)[0] for process in compiling]
    assert [process.returncode for process in compiling] == [0, 0]
    assert [float(text) for text in outputs] == [7.0, 4.0]
    # A third process finds both specializations in the cache, each with its own machine code.
    loaded = subprocess.run([sys.executable, "-c", LOAD, str(tmp_path)], env=env, capture_output=True, text=True,
                            check=True, timeout=120)  # fmt: skip
    assert json.loads(loaded.stdout) == {"values": [7, 4.0], "cache_hits": 2}


# Two processes reach one kernel's first call together; the first compile is slowed down so that they overlap.
SAME_KERNEL_AT_ONCE = """
import json, os, sys, time
from numba.core import event

role, directory = sys.argv[1], sys.argv[2]
other = {"a": "b", "b": "a"}[role]
compiled = []


class SlowCompile(event.Listener):
    def on_start(self, ev):  # fires on a cache miss only, not on a load
        compiled.append(1)
        time.sleep(1.0)

    def on_end(self, ev):
        pass


event.register("numba:compile", SlowCompile())
sys.path.insert(0, directory)
import kernels

open(os.path.join(directory, "ready-" + role), "w").close()
deadline = time.time() + 30
while not os.path.exists(os.path.join(directory, "ready-" + other)) and time.time() < deadline:
    time.sleep(0.005)
print(json.dumps({"value": kernels.twice_plus_one(3), "compiled": len(compiled)}))
"""


def test_processes_reaching_a_kernel_together_compile_it_once(tmp_path):
    (tmp_path / "kernels.py").write_text(textwrap.dedent(KERNELS))
    env = {key: value for key, value in os.environ.items() if key != "SEQCOMPARE_DISABLE_NUMBA_CACHE"}
    env.pop("NUMBA_CACHE_DIR", None)
    running = [subprocess.Popen([sys.executable, "-c", SAME_KERNEL_AT_ONCE, role, str(tmp_path)], env=env,
                                stdout=subprocess.PIPE, text=True) for role in ("a", "b")]  # fmt: skip
    results = [json.loads(process.communicate(timeout=120)[0]) for process in running]
    assert [result["value"] for result in results] == [7, 7]
    assert sorted(result["compiled"] for result in results) == [0, 1]  # the other process loaded it


def test_read_only_arguments_share_one_specialization_and_leave_the_callers_arrays_as_they_were():
    import numpy as np

    from seqcompare._jit import jit

    @jit(reads=("values",), cache=False)
    def total_into(values, out):
        out[0] = values.sum()

    out = np.zeros(1, np.int64)
    writable = np.arange(10, dtype=np.int64)
    read_only = np.arange(5, dtype=np.int64)
    read_only.flags.writeable = False
    total_into(writable, out)
    assert out[0] == 45 and writable.flags.writeable
    total_into(read_only, out)
    total_into(values=writable, out=out)
    assert out[0] == 45 and len(total_into.signatures) == 1
    with pytest.raises(TypeError, match="no arguments"):
        jit(reads=("value",))(lambda values, out: None)


# A fresh process: kernels loaded from the cache without Numba's registries, then a compile that calls one of them.
LOAD_THEN_COMPILE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import kernels

values = [kernels.fill_squares(5).tolist(), kernels.twice_plus_one(3)]
registries_after_loads = "numba.np.linalg" in sys.modules
values.append(kernels.sum_of_twice_plus_one(4))  # not cached: compiled here, calling the loaded kernel
print(json.dumps({"values": values, "registries_after_loads": registries_after_loads,
                  "registries_after_compile": "numba.np.linalg" in sys.modules,
                  "cache_hits": sum(kernels.fill_squares.stats.cache_hits.values())
                  + sum(kernels.twice_plus_one.stats.cache_hits.values())}))
"""


def test_cached_kernels_load_without_numbas_registries_and_compiles_still_get_them(tmp_path):
    # Loading machine code from the cache skips Numba's registries (0.4 s a process); a kernel that allocates
    # an array needs Numba's runtime all the same, and a later compile (a cache miss) installs the registries.
    kernels = KERNELS + textwrap.dedent('''
        import numpy as np


        @jit
        def fill_squares(n):
            out = np.empty(n, np.int64)
            for i in range(n):
                out[i] = i * i
            return out


        @jit(cache=False)
        def sum_of_twice_plus_one(n):
            total = 0
            for i in range(n):
                total += twice_plus_one(i)
            return total
    ''')
    (tmp_path / "kernels.py").write_text(kernels)
    env = {key: value for key, value in os.environ.items() if key != "SEQCOMPARE_DISABLE_NUMBA_CACHE"}
    env.pop("NUMBA_CACHE_DIR", None)  # the cache goes beside kernels.py, in tmp_path
    runs = [json.loads(subprocess.run([sys.executable, "-c", LOAD_THEN_COMPILE, str(tmp_path)], env=env,
                                      capture_output=True, text=True, check=True, timeout=120).stdout)
            for _ in range(2)]  # fmt: skip
    assert [run["values"] for run in runs] == [[[0, 1, 4, 9, 16], 7, 16]] * 2
    assert [run["cache_hits"] for run in runs] == [0, 2]  # the first run compiled both, the second loaded both
    assert runs[1]["registries_after_loads"] is False
    assert runs[1]["registries_after_compile"] is True
