"""btsx's host tools: the runner (runner), the KTAP validator (ktap), the trace decoder
(trace) and the benchmark (bench).  The executables tools/btsx-run, tools/btsx-trace and
tools/bench.py only call their main(); Python finds this package beside them."""
