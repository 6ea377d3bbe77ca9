# Checked mode across the API and the ops, and collective mismatches (issue 8, items 3-4).
tessera_add_gtest(checked_mode_test SOURCES checked_mode_test.cpp LABELS reliability unit)
tessera_add_gtest(collective_mismatch_test SOURCES collective_mismatch_test.cpp
                  LABELS reliability unit)
