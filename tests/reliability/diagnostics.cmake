# Host diagnostics that name the caller's operation (issue 17): barrier failures, finalize with
# kernels in flight. Threads mode.
tessera_add_gtest(host_diagnostics_test SOURCES host_diagnostics_test.cpp LABELS reliability unit)
