#include "tessera/stream.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "launch/block_pool.hpp"
#include "launch/native_stream.hpp"
#include "runtime/failure_code.hpp"
#include "runtime/fault_report.hpp"
#include "tessera/device/failure.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace {

// The failure of a task as the tessera::Error synchronize() throws.
std::exception_ptr as_error(std::exception_ptr failure, int pe) {
  try {
    std::rethrow_exception(failure);
  } catch (const device::Failure& f) {
    return std::make_exception_ptr(Error(detail::error_code(f.code()), pe, f.what()));
  } catch (const Error&) {
    return std::current_exception();
  } catch (const std::exception& e) {
    return std::make_exception_ptr(
        Error(ErrorCode::internal, pe, std::string("work on a stream threw: ") + e.what()));
  } catch (...) {
    return std::make_exception_ptr(
        Error(ErrorCode::internal, pe, "work on a stream threw a non-standard exception"));
  }
}

}  // namespace

// A point in one stream's work another stream waits for (Stream::wait_for): set when the first
// stream reaches it, with the failure that stream held then, if any.
struct StreamMark {
  std::mutex mu;
  std::condition_variable reached;
  bool done = false;
  std::exception_ptr failure;
};

struct Stream::Impl {
  // Work on the queue; a marker runs even after a failure (it hands the failure on).
  struct Task {
    std::function<void()> fn;
    std::shared_ptr<StreamMark> mark;
  };

  int pe;
  std::mutex mu;
  std::condition_variable wake;  // work arrived, or stop
  std::condition_variable idle;  // the queue drained
  std::deque<Task> queue;
  bool busy = false;
  bool stop = false;
  std::exception_ptr error;  // first failure since the last synchronize
  detail::BlockPool blocks;  // used by the executor thread only
  std::thread executor;
  std::unique_ptr<detail::NativeStream> native;  // GPU work, when the backend has a device

  explicit Impl(int p) : pe(p) {}

  void start() {
    if (!executor.joinable()) executor = std::thread([this] { loop(); });
  }

  void loop() {
    std::unique_lock lock(mu);
    for (;;) {
      wake.wait(lock, [&] { return !queue.empty() || stop; });
      if (queue.empty()) return;
      auto task = std::move(queue.front());
      queue.pop_front();
      if (task.mark) {
        // Hand this stream's failure, if any, to the waiting stream, and run on.
        std::exception_ptr handed = std::exchange(error, nullptr);
        lock.unlock();
        {
          std::lock_guard mark_lock(task.mark->mu);
          task.mark->failure = std::move(handed);
          task.mark->done = true;
        }
        task.mark->reached.notify_all();
        task.mark = nullptr;
        lock.lock();
        if (queue.empty()) idle.notify_all();
        continue;
      }
      const bool skip = error != nullptr;
      busy = true;
      lock.unlock();
      std::exception_ptr failure;
      if (!skip) {
        try {
          detail::FaultScope scope(pe,
                                   "work on a stream");  // a stray access is reported as this PE's
          task.fn();
        } catch (...) {
          failure = as_error(std::current_exception(), pe);
        }
      }
      task.fn = nullptr;
      lock.lock();
      busy = false;
      if (failure && !error) error = std::move(failure);
      failure = nullptr;  // released under the lock, not after the next task started
      if (queue.empty()) idle.notify_all();
    }
  }
};

Stream::Stream(int pe) : impl_(std::make_unique<Impl>(pe)) {}

Stream::Stream(int pe, std::unique_ptr<detail::NativeStream> native)
    : impl_(std::make_unique<Impl>(pe)) {
  impl_->native = std::move(native);
}

Stream::~Stream() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->wake.notify_one();
  if (impl_->executor.joinable()) impl_->executor.join();
}

std::size_t Stream::in_flight() const {
  std::lock_guard lock(impl_->mu);
  return impl_->queue.size() + (impl_->busy ? 1 : 0);
}

bool Stream::wait_idle(std::chrono::milliseconds bound) {
  std::unique_lock lock(impl_->mu);
  return impl_->idle.wait_for(lock, bound, [&] { return impl_->queue.empty() && !impl_->busy; });
}

int Stream::pe() const { return impl_->pe; }

void* Stream::native_handle() const { return impl_->native ? impl_->native->handle() : nullptr; }

int Stream::native_device() const { return impl_->native ? impl_->native->device() : -1; }

void Stream::enqueue(std::function<void()> fn) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->start();
    impl_->queue.push_back(Impl::Task{std::move(fn), nullptr});
  }
  impl_->wake.notify_one();
}

void Stream::enqueue_grid(int grid, std::function<void(device::Block)> fn) {
  if (grid <= 0) {
    throw Error(ErrorCode::invalid_argument, impl_->pe,
                "launch: grid must be at least 1 block, got " + std::to_string(grid));
  }
  Impl* impl = impl_.get();
  enqueue([impl, grid, fn = std::move(fn)] {
    // Every block's thread reports a stray access as this PE's, during a kernel.
    const std::function<void(device::Block)> block = [pe = impl->pe, &fn](device::Block b) {
      detail::FaultScope scope(pe, "a kernel");
      fn(b);
    };
    if (auto failure = impl->blocks.run(grid, block)) std::rethrow_exception(failure);
  });
}

void Stream::wait_for(Stream& other) {
  if (impl_->native || other.impl_->native) {
    throw Error(ErrorCode::backend, impl_->pe,
                "Stream::wait_for: not available on native GPU streams yet (host backend only)");
  }
  if (&other == this) return;  // a stream is always in order with itself
  auto mark = std::make_shared<StreamMark>();
  {
    std::lock_guard lock(other.impl_->mu);
    other.impl_->start();
    other.impl_->queue.push_back(Impl::Task{nullptr, mark});
  }
  other.impl_->wake.notify_one();
  enqueue([mark] {
    std::unique_lock lock(mark->mu);
    mark->reached.wait(lock, [&] { return mark->done; });
    if (mark->failure) std::rethrow_exception(std::exchange(mark->failure, nullptr));
  });
}

void Stream::synchronize() {
  if (impl_->native) impl_->native->synchronize();
  std::exception_ptr error;
  {
    std::unique_lock lock(impl_->mu);
    impl_->idle.wait(lock, [&] { return impl_->queue.empty() && !impl_->busy; });
    error = std::exchange(impl_->error, nullptr);
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace tessera
