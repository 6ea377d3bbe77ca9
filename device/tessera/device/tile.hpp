// Tile<T>: a 2-D view (rows x cols, row-major, leading dimension ld >= cols, in elements) over
// local or symmetric memory. The unit every put/get moves. A plain struct, passed by value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device/numeric.hpp"
#include "tessera/device/platform/macros.hpp"

namespace tessera::device {

// Element types a tile may hold: any trivially copyable type. Copies use the widest accesses
// the element's addresses allow, not its size (alignof(T) may be below sizeof(T)).
template <class T>
inline constexpr bool is_tile_element_v = std::is_trivially_copyable_v<T>;

template <class T>
struct Tile {
  static_assert(is_tile_element_v<std::remove_const_t<T>>, "Tile elements are trivially copyable");

  T* data = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t ld = 0;  // elements from the start of one row to the start of the next

  constexpr Tile() = default;  // host and device alike (defaulted members take both)
  // A rows x cols tile at `data`; ld defaults to cols (dense).
  TESSERA_HOST_DEVICE constexpr Tile(T* d, std::size_t r, std::size_t c, std::size_t l = 0)
      : data(d), rows(r), cols(c), ld(l == 0 ? c : l) {}
  // A read-only view of a writable tile.
  template <class U, class = std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>>>
  TESSERA_HOST_DEVICE constexpr Tile(const Tile<U>& t)  // NOLINT: implicit by design
      : data(t.data), rows(t.rows), cols(t.cols), ld(t.ld) {}

  TESSERA_HOST_DEVICE constexpr std::size_t size() const { return rows * cols; }
  TESSERA_HOST_DEVICE constexpr bool empty() const { return rows == 0 || cols == 0; }
  // True when the rows follow each other with no gap: the tile is one run of size() elements.
  TESSERA_HOST_DEVICE constexpr bool is_contiguous() const { return rows <= 1 || ld == cols; }
  // Bytes from the first element to one past the last: the memory the tile touches.
  TESSERA_HOST_DEVICE constexpr std::size_t extent_bytes() const {
    return empty() ? 0 : ((rows - 1) * ld + cols) * sizeof(T);
  }
  TESSERA_HOST_DEVICE constexpr T* row(std::size_t r) const { return data + r * ld; }
  TESSERA_HOST_DEVICE constexpr T& operator()(std::size_t r, std::size_t c) const {
    return data[r * ld + c];
  }
  // The rows x cols window starting at (row0, col0); shares this tile's ld.
  TESSERA_HOST_DEVICE constexpr Tile sub(std::size_t row0, std::size_t col0, std::size_t r,
                                         std::size_t c) const {
    return Tile(data + row0 * ld + col0, r, c, ld);
  }
  // The same shape and ld over another base pointer (e.g. the same tile on a peer).
  TESSERA_HOST_DEVICE constexpr Tile with_data(T* d) const { return Tile(d, rows, cols, ld); }
};

static_assert(std::is_trivially_copyable_v<Tile<float>>, "tiles are passed by value");

// A dense 1 x n tile over n elements.
template <class T>
TESSERA_HOST_DEVICE constexpr Tile<T> make_tile(T* data, std::size_t n) {
  return Tile<T>(data, 1, n, n);
}

// A rows x cols tile with leading dimension ld (default: cols).
template <class T>
TESSERA_HOST_DEVICE constexpr Tile<T> make_tile(T* data, std::size_t rows, std::size_t cols,
                                                std::size_t ld = 0) {
  return Tile<T>(data, rows, cols, ld);
}

}  // namespace tessera::device
