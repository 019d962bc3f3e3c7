# Session 45, call 5 (one H200): the DP GPU tests with pages registered 16 MB at a time, each chunk copied as
# soon as it is locked (and the last piece a quarter of the others); bench/dp_unlock_probe.py on int32 (deferred
# unlocking on and off); every row of bench/dp_api.py (goal 1) in three fresh processes: call 4's script.
TESTS_K="test_dp" bash bench/gpu_logs/s45/call4.sh
