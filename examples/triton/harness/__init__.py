"""What the Triton examples share: run.py, the host side of one PE's run; tiles.py, device pieces
their kernels call; column_blocks.py, the problem two of them solve; compile_checks.py, their
COMPILE_CHECKS entries. Not an example (tests/triton/test_examples.py runs every
examples/triton/*.py): nothing here is a kernel of its own to check."""
