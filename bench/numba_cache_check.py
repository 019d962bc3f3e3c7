"""Check a Numba on-disk cache: does every index entry's data file hold the machine code of that entry's
signature? (A diagnostic for the cache race that seqcompare._jit guards against; see bench/RESULTS.md.)

Usage: python3 bench/numba_cache_check.py DIRECTORY [NAME_FRAGMENT ...]
Prints one line per index file with its entry count, every mismatched entry, and the signatures of the index
files whose names contain a fragment. Exit status 1 if any entry is mismatched.
"""

import glob
import os
import pickle
import sys


def main() -> int:
    directory, fragments = sys.argv[1], sys.argv[2:]
    mismatched = 0
    for index_path in sorted(glob.glob(os.path.join(directory, "**", "*.nbi"), recursive=True)):
        with open(index_path, "rb") as handle:
            pickle.load(handle)  # Numba's version
            _stamp, overloads = pickle.loads(handle.read())
        name = os.path.relpath(index_path, directory)
        show = any(fragment in name for fragment in fragments)
        print(f"{name}: {len(overloads)} entries")
        for key, data_name in overloads.items():
            data_path = os.path.join(os.path.dirname(index_path), data_name)
            try:
                with open(data_path, "rb") as handle:
                    data = pickle.loads(handle.read())
            except OSError as error:
                print(f"  MISSING {data_name}: {error}")
                continue
            signatures = [item for item in data if type(item).__name__ == "Signature"]
            held = str(signatures[0].args) if signatures else "?"
            wanted = str(key[0])
            if held != wanted:
                mismatched += 1
                print(f"  MISMATCH {data_name}: key {wanted} holds {held}")
            elif show:
                print(f"  {data_name}: {wanted}")
    print(f"{mismatched} mismatched entries")
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
