"""What the Triton examples share: run.py, the host side of one PE's run; tiles.py, the device
pieces several examples' kernels call. Not an example (tests/triton/test_examples.py runs every
examples/triton/*.py): it holds no kernel of its own to check."""
