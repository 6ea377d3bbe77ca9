// Symmetric<T>: an RAII handle on a collective heap allocation. Destroying it frees the block
// collectively, so handles must be destroyed in the same order on every PE (as they are made).
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "tessera/device/tile.hpp"

namespace tessera {

namespace detail {
class RuntimeImpl;
// Collective free through the runtime; a no-op once the runtime is finalized.
void symmetric_free(RuntimeImpl& rt, void* ptr);
}  // namespace detail

template <class T>
class Symmetric {
 public:
  Symmetric() = default;
  Symmetric(std::shared_ptr<detail::RuntimeImpl> rt, T* ptr, std::size_t count)
      : rt_(std::move(rt)), ptr_(ptr), count_(count) {}
  Symmetric(Symmetric&& o) noexcept
      : rt_(std::move(o.rt_)), ptr_(std::exchange(o.ptr_, nullptr)), count_(o.count_) {}
  Symmetric& operator=(Symmetric&& o) noexcept {
    if (this != &o) {
      reset();
      rt_ = std::move(o.rt_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = o.count_;
    }
    return *this;
  }
  Symmetric(const Symmetric&) = delete;
  Symmetric& operator=(const Symmetric&) = delete;
  ~Symmetric() { reset(); }

  // Collective: frees the block now.
  void reset() {
    if (ptr_ != nullptr && rt_) detail::symmetric_free(*rt_, ptr_);
    ptr_ = nullptr;
    rt_.reset();
  }

  T* get() const { return ptr_; }
  T* data() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  T& operator[](std::size_t i) const { return ptr_[i]; }
  // A rows x cols view of the block (ld defaults to cols), for device calls; the block must
  // hold at least (rows - 1) * ld + cols elements.
  device::Tile<T> tile(std::size_t rows, std::size_t cols, std::size_t ld = 0) const {
    return device::Tile<T>(ptr_, rows, cols, ld);
  }
  T* begin() const { return ptr_; }
  T* end() const { return ptr_ + count_; }

 private:
  std::shared_ptr<detail::RuntimeImpl> rt_;
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace tessera
