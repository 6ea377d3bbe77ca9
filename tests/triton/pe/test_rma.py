"""translate, load, store, put and get against NumPy references: tiles with strides and masks,
on the right neighbour (through the proxy where it is on another node)."""

import numpy as np
import pytest
import torch

import tessera
import tessera.triton as tx
from conftest import mapped, neighbours, rng_of, sym
from tx_kernels import load_store, one_element, tile_copy, translate

R, C = 4, 8
LD = 11  # rows of the big arrays: a strided tile inside them


def tile_data(pe):
    return rng_of(pe).standard_normal((R, LD)).astype(np.float32)


def expected_region(src, rows, cols, fill):
    out = np.full((R, LD), fill, np.float32)
    out[:rows, :cols] = src[:rows, :cols]
    return out


@pytest.mark.parametrize("rows,cols", [(R, C), (3, 5), (1, 1), (0, 4)])
def test_put_writes_the_masked_strided_tile_on_the_peer(rt, ctx, rows, cols):
    right, left = neighbours(rt)
    dst, dst_t = sym(rt, (R, LD), "float32", -7.0)
    src, src_t = sym(rt, (R, LD), "float32")
    src_t[:] = torch.from_numpy(tile_data(rt.pe))
    rt.barrier()
    tile_copy[(1, )](dst_t, src_t, right, ctx, rows, cols, LD, LD, R=R, C=C, GET=False)
    rt.barrier()
    assert np.array_equal(dst_t.numpy(), expected_region(tile_data(left), rows, cols, -7.0))
    rt.barrier()


@pytest.mark.parametrize("rows,cols", [(R, C), (2, 7)])
def test_get_reads_the_masked_strided_tile_of_the_peer(rt, ctx, rows, cols):
    right, left = neighbours(rt)
    src, src_t = sym(rt, (R, LD), "float32")
    src_t[:] = torch.from_numpy(tile_data(rt.pe))
    out, out_t = sym(rt, (R, LD), "float32", -7.0)
    rt.barrier()
    tile_copy[(1, )](out_t, src_t, right, ctx, rows, cols, LD, LD, R=R, C=C, GET=True)
    assert np.array_equal(out_t.numpy(), expected_region(tile_data(right), rows, cols, -7.0))
    rt.barrier()


def test_put_between_different_strides_and_from_self(rt, ctx):
    """A dense source tile into a strided destination, and a put to this PE itself."""
    dst, dst_t = sym(rt, (R, LD), "float32", 0.0)
    src, src_t = sym(rt, (R, C), "float32")
    src_t[:] = torch.arange(R * C, dtype=torch.float32).reshape(R, C) + rt.pe
    tile_copy[(1, )](dst_t, src_t, rt.pe, ctx, R, C, LD, C, R=R, C=C, GET=False)
    want = np.zeros((R, LD), np.float32)
    want[:, :C] = src_t.numpy()
    assert np.array_equal(dst_t.numpy(), want)
    rt.barrier()


def test_translate_gives_the_peers_mapped_address(rt, ctx):
    a, a_t = sym(rt, 16, "float32")
    out = torch.zeros(1, dtype=torch.int64)
    for pe in range(rt.n_pes):
        if not mapped(rt, pe):
            continue
        translate[(1, )](a_t[3:], pe, out, ctx)
        assert out.item() == rt.peer(a, pe).data_ptr + 3 * 4
    rt.barrier()


def test_load_reads_the_peers_values_and_other_where_masked(rt, ctx):
    right, left = neighbours(rt)
    if not mapped(rt, right):
        pytest.skip("load needs a mapped peer (test_checked covers the unmapped case)")
    a, a_t = sym(rt, 16, "int32")
    a_t[:] = torch.arange(16, dtype=torch.int32) * 10 + rt.pe
    rt.barrier()
    out = torch.zeros(16, dtype=torch.int32)
    load_store[(1, )](a_t, out, right, ctx, 13, N=16, STORE=False)
    want = np.where(np.arange(16) < 13, np.arange(16) * 10 + right, -1)
    assert np.array_equal(out.numpy(), want)
    rt.barrier()


def test_store_writes_the_masked_values_on_the_peer(rt, ctx):
    right, left = neighbours(rt)
    if not mapped(rt, right):
        pytest.skip("store needs a mapped peer (test_checked covers the unmapped case)")
    a, a_t = sym(rt, 16, "int32", -1)
    local = torch.arange(16, dtype=torch.int32) + 100 * rt.pe
    load_store[(1, )](a_t, local, right, ctx, 9, N=16, STORE=True)
    rt.barrier()
    want = np.where(np.arange(16) < 9, np.arange(16) + 100 * left, -1)
    assert np.array_equal(a_t.numpy(), want)
    rt.barrier()


# p and g: one element by value. 1- and 2-byte elements need a mapped peer (the proxy carries
# 32/64-bit words).
ONE_ELEMENT_DTYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64", "int8",
                      "float16"]


def one_value(pe, dtype):
    """The value PE `pe` writes with p: exact in every dtype above, and differs per PE."""
    v = -3 - 2 * pe if np.dtype(dtype).kind == "i" else 5 + 2 * pe
    if np.dtype(dtype).kind == "f":
        v += 0.5
    return np.array([v], dtype)


def needs_mapping(rt, pe, dtype):
    return np.dtype(dtype).itemsize < 4 and not mapped(rt, pe)


@pytest.mark.parametrize("dtype", ONE_ELEMENT_DTYPES)
def test_p_writes_one_value_on_the_peer(rt, ctx, dtype):
    """Each PE p's its value into element 3 of its right neighbour's array; the others stay."""
    right, left = neighbours(rt)
    if needs_mapping(rt, right, dtype) or needs_mapping(rt, left, dtype):
        pytest.skip(f"{dtype} elements need a mapped peer (the proxy carries 32/64-bit words)")
    a, a_t = sym(rt, 8, dtype, 1)
    rt.barrier()
    one_element[(1, )](a_t[3:], torch.from_numpy(one_value(rt.pe, dtype)), a_t, right, ctx,
                       GET=False)
    rt.barrier()
    want = np.ones(8, dtype)
    want[3] = one_value(left, dtype)[0]
    assert np.array_equal(a_t.numpy(), want), a_t
    rt.barrier()


@pytest.mark.parametrize("dtype", ONE_ELEMENT_DTYPES)
def test_g_reads_one_value_of_the_peer(rt, ctx, dtype):
    right, left = neighbours(rt)
    if needs_mapping(rt, right, dtype):
        pytest.skip(f"{dtype} elements need a mapped peer (the proxy carries 32/64-bit words)")
    a, a_t = sym(rt, 8, dtype, 1)
    a_t[5] = torch.from_numpy(one_value(rt.pe, dtype))[0]
    out = torch.zeros(1, dtype=a_t.dtype)
    rt.barrier()
    one_element[(1, )](a_t[5:], out, out, right, ctx, GET=True)
    assert out.numpy()[0] == one_value(right, dtype)[0]
    rt.barrier()
