# Session 45, call 6 (one H200): as call 5 (call 4's script), with the ranges locked ahead by a registrar
# thread from the start of the call (8ad1e0b, reverted in f5c8833).
TESTS_K="test_dp" bash bench/gpu_logs/s45/call4.sh
