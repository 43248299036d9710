"""The parts of the MCP benchmark (`bench.mcp_tools`, which runs them in order):

- `plan`: workloads per mode, pairs, eras and targets; the checks, `Session`, `Footprint`;
- `floor`: the hand-written floor clients;
- `sessions`: server processes and sessions of each pair, in either era;
- `throughput`: the throughput, attribution and both-eras tables;
- `cold_start`: cold start and peak RSS per server process;
- `import_time`: import time in fresh interpreters.
"""
