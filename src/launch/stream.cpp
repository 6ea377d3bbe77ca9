#include "tessera/stream.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "launch/block_pool.hpp"
#include "launch/native_stream.hpp"
#include "launch/spin.hpp"
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

// The work a capture recorded (host backend): entries in the order they were enqueued, each on
// a lane (0: the stream that began the capture; then each stream that joined it through
// wait_for, in the order they joined). Marks connect lanes: a `signal` entry is where a lane's
// work reached a point another lane's `wait` entry waits for.
struct CaptureRecord {
  enum class Kind { task, signal, wait };
  struct Entry {
    int lane;
    Kind kind;
    std::shared_ptr<const std::function<void()>> fn;  // kind task
    int mark = -1;                                    // kind signal / wait
  };
  std::mutex mu;
  std::vector<Stream*> lanes;  // lanes[0] began the capture
  std::vector<Entry> entries;
  int marks = 0;
};

namespace {

// The work that waits for `mark` on the waiting stream, taking over its failure.
std::function<void()> wait_task(std::shared_ptr<StreamMark> mark) {
  return [mark = std::move(mark)] {
    std::unique_lock lock(mark->mu);
    mark->reached.wait(lock, [&] { return mark->done; });
    if (mark->failure) std::rethrow_exception(std::exchange(mark->failure, nullptr));
  };
}

}  // namespace

struct Stream::Impl {
  // Work on the queue; a marker runs even after a failure (it hands the failure on).
  struct Task {
    std::function<void()> fn;
    std::shared_ptr<StreamMark> mark;
  };

  // Tasks run one at a time, in queue order, on one of two runners: the executor thread, or a
  // thread inside synchronize(), which takes the queued tasks itself instead of waiting for the
  // executor to wake up (it would block until they ran anyway). `busy` says a runner holds a
  // task; only the runner that set it pops the next one, so the order is the queue's.
  int pe;
  mutable std::mutex mu;
  std::condition_variable wake;  // work arrived, or stop (executor)
  std::condition_variable idle;  // a task finished (synchronize, wait_idle)
  std::deque<Task> queue;
  bool busy = false;
  bool stop = false;
  // The executor sleeps until notified (no work came for kExecutorDoze): enqueue must notify
  // it. While it dozes (timed waits of kExecutorPoll) enqueue leaves it to its timer.
  bool executor_asleep = false;
  int idle_waiters = 0;  // threads waiting on `idle`
  // Tasks ever pushed and ever finished: written under mu, read without it by spinning threads.
  std::atomic<std::uint64_t> pushed{0};
  std::atomic<std::uint64_t> finished{0};
  std::exception_ptr error;  // first failure since the last synchronize
  detail::BlockPool blocks;  // used by the runner holding `busy` only
  std::thread executor;
  std::unique_ptr<detail::NativeStream> native;  // GPU work, when the backend has a device
  // While capturing (host backend): where enqueued work goes instead of the queue, and this
  // stream's lane in it. Set and read by the threads that enqueue (a stream is fed by one
  // thread at a time, as a CUDA stream under capture is).
  std::shared_ptr<CaptureRecord> capture;
  int lane = 0;
  bool native_capturing = false;

  explicit Impl(int p) : pe(p) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(ErrorCode::invalid_argument, pe, message);
  }

  void start() {
    if (!executor.joinable()) executor = std::thread([this] { loop(); });
  }

  // Appends a task (lock held); true when the executor sleeps and must be woken.
  bool push(Task task) {
    start();
    queue.push_back(std::move(task));
    pushed.fetch_add(1, std::memory_order_release);
    return executor_asleep;
  }

  // Runs the front task: lock held, queue not empty, no runner busy. Returns with the lock held.
  void run_front(std::unique_lock<std::mutex>& lock) {
    auto task = std::move(queue.front());
    queue.pop_front();
    if (task.mark) {
      // Hand this stream's failure, if any, to the waiting stream, and run on.
      std::exception_ptr handed = std::exchange(error, nullptr);
      busy = true;
      lock.unlock();
      {
        std::lock_guard mark_lock(task.mark->mu);
        task.mark->failure = std::move(handed);
        task.mark->done = true;
      }
      task.mark->reached.notify_all();
      task.mark = nullptr;
      lock.lock();
      finish_task();
      return;
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
    if (failure && !error) error = std::move(failure);
    failure = nullptr;  // released under the lock, not after the next task started
    finish_task();
  }

  // Lock held: the running task is done; tell whoever waits for it.
  void finish_task() {
    busy = false;
    finished.fetch_add(1, std::memory_order_release);
    if (idle_waiters > 0) idle.notify_all();
    // A runner inside synchronize() leaves later tasks (pushed after it was called) to the
    // executor, which may have gone back to sleep while this one was busy.
    if (executor_asleep && !queue.empty()) wake.notify_one();
  }

  void loop() {
    std::unique_lock lock(mu);
    std::uint64_t seen = pushed.load(std::memory_order_relaxed);
    auto last_push = std::chrono::steady_clock::now();
    for (;;) {
      if (!queue.empty() && !busy) {
        run_front(lock);
        continue;
      }
      if (stop && queue.empty() && !busy) return;
      // Nothing to run: poll briefly for the next task, then doze.
      const std::uint64_t before = pushed.load(std::memory_order_relaxed);
      lock.unlock();
      detail::spin_for(detail::kExecutorSpin,
                       [&] { return pushed.load(std::memory_order_acquire) != before; });
      lock.lock();
      if ((!queue.empty() && !busy) || stop) continue;
      const auto now = std::chrono::steady_clock::now();
      if (const std::uint64_t p = pushed.load(std::memory_order_relaxed); p != seen) {
        seen = p;
        last_push = now;
      }
      const auto ready = [&] { return (!queue.empty() && !busy) || stop; };
      if (now - last_push < detail::kExecutorDoze) {
        // Work came in recently (the caller is active): wake on a short timer rather than be
        // notified, so enqueue costs no futex wake and the next synchronize() most often runs
        // the task itself first. Work nobody synchronizes on starts within the timer.
        wake.wait_for(lock, detail::kExecutorPoll, ready);
        continue;
      }
      executor_asleep = true;
      wake.wait(lock, ready);
      executor_asleep = false;
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
  ++impl_->idle_waiters;
  const bool idle =
      impl_->idle.wait_for(lock, bound, [&] { return impl_->queue.empty() && !impl_->busy; });
  --impl_->idle_waiters;
  return idle;
}

int Stream::pe() const { return impl_->pe; }

void* Stream::native_handle() const { return impl_->native ? impl_->native->handle() : nullptr; }

int Stream::native_device() const { return impl_->native ? impl_->native->device() : -1; }

void Stream::enqueue(std::function<void()> fn) {
  if (impl_->capture) {
    CaptureRecord& r = *impl_->capture;
    std::lock_guard lock(r.mu);
    r.entries.push_back({impl_->lane, CaptureRecord::Kind::task,
                         std::make_shared<const std::function<void()>>(std::move(fn)), -1});
    return;
  }
  if (impl_->native_capturing) {
    impl_->fail(
        "Stream::enqueue: host work cannot be captured into a GPU graph (the stream is "
        "capturing on its native stream); enqueue it before begin_capture or after end_capture");
  }
  bool notify = false;
  {
    std::lock_guard lock(impl_->mu);
    notify = impl_->push(Impl::Task{std::move(fn), nullptr});
  }
  if (notify) impl_->wake.notify_one();
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
  if (impl_->capture || other.impl_->capture) {
    join_capture(other);
    return;
  }
  auto mark = std::make_shared<StreamMark>();
  bool notify = false;
  {
    std::lock_guard lock(other.impl_->mu);
    notify = other.impl_->push(Impl::Task{nullptr, mark});
  }
  if (notify) other.impl_->wake.notify_one();
  enqueue(wait_task(std::move(mark)));
}

void Stream::synchronize() {
  if (impl_->capture || impl_->native_capturing) {
    impl_->fail(
        "Stream::synchronize: the stream is capturing (begin_capture), and nothing it "
        "captured has run; call end_capture() first, then launch the graph and synchronize");
  }
  if (impl_->native) impl_->native->synchronize();
  Impl& s = *impl_;
  std::exception_ptr error;
  {
    std::unique_lock lock(s.mu);
    // Everything pushed so far; tasks finish in queue order, so `finished` reaching this count
    // means all of them ran.
    const std::uint64_t target = s.pushed.load(std::memory_order_relaxed);
    while (s.finished.load(std::memory_order_relaxed) < target) {
      if (!s.busy && !s.queue.empty()) {
        // Run the next task here: no wake-up of the executor to wait for, and this thread
        // would only block until it ran.
        s.run_front(lock);
        continue;
      }
      // The executor runs a task: poll for its end briefly, then sleep until notified.
      const std::uint64_t before = s.finished.load(std::memory_order_relaxed);
      lock.unlock();
      const bool moved = detail::spin_for(detail::kSynchronizeSpin, [&] {
        return s.finished.load(std::memory_order_acquire) != before;
      });
      lock.lock();
      if (moved) continue;
      ++s.idle_waiters;
      s.idle.wait(lock, [&] { return s.finished.load(std::memory_order_relaxed) != before; });
      --s.idle_waiters;
    }
    error = std::exchange(s.error, nullptr);
  }
  if (error) std::rethrow_exception(error);
}

void Stream::join_capture(Stream& other) {
  Impl& me = *impl_;
  Impl& them = *other.impl_;
  if (!them.capture) {
    me.fail(
        "Stream::wait_for: a capturing stream can only wait for streams in its capture "
        "(the other stream, of PE " +
        std::to_string(them.pe) + ", is not capturing: its work would not be in the graph)");
  }
  if (me.capture && me.capture != them.capture) {
    me.fail("Stream::wait_for: the two streams are capturing into different graphs");
  }
  CaptureRecord& r = *them.capture;
  std::lock_guard lock(r.mu);
  if (!me.capture) {
    me.capture = them.capture;
    me.lane = static_cast<int>(r.lanes.size());
    r.lanes.push_back(this);
  }
  const int mark = r.marks++;
  r.entries.push_back({them.lane, CaptureRecord::Kind::signal, nullptr, mark});
  r.entries.push_back({me.lane, CaptureRecord::Kind::wait, nullptr, mark});
}

bool Stream::capturing() const { return impl_->capture != nullptr || impl_->native_capturing; }

void Stream::begin_capture() {
  Impl& s = *impl_;
  if (capturing()) {
    s.fail(
        "Stream::begin_capture: the stream is capturing already (begun here or joined "
        "through wait_for); end that capture first");
  }
  if (s.native) {
    s.native->begin_capture();
    s.native_capturing = true;
    return;
  }
  s.capture = std::make_shared<CaptureRecord>();
  s.capture->lanes.push_back(this);
  s.lane = 0;
}

struct Graph::Impl {
  int pe = -1;
  std::vector<CaptureRecord::Entry> entries;
  std::vector<Stream*> lanes;  // lanes[0] is replaced by the stream launch() is given
  int marks = 0;
  std::size_t items = 0;
  std::unique_ptr<detail::NativeGraph> native;
};

Graph Stream::end_capture() {
  Impl& s = *impl_;
  Graph graph;
  graph.impl_ = std::make_unique<Graph::Impl>();
  graph.impl_->pe = s.pe;
  if (s.native_capturing) {
    s.native_capturing = false;
    graph.impl_->native = s.native->end_capture();
    graph.impl_->items = graph.impl_->native->size();
    return graph;
  }
  if (!s.capture || s.lane != 0) {
    s.fail(s.capture ? "Stream::end_capture: this stream joined a capture through wait_for; "
                       "the stream that began it ends it"
                     : "Stream::end_capture: the stream is not capturing (call begin_capture)");
  }
  std::shared_ptr<CaptureRecord> record = std::move(s.capture);
  std::lock_guard lock(record->mu);
  for (Stream* lane : record->lanes) lane->impl_->capture = nullptr;
  // Every joined stream's last captured entry must be a point another stream waited for:
  // work after it would be in no stream's order once the graph is launched.
  for (std::size_t lane = 1; lane < record->lanes.size(); ++lane) {
    const CaptureRecord::Entry* last = nullptr;
    for (const auto& e : record->entries) {
      if (e.lane == static_cast<int>(lane)) last = &e;
    }
    if (last == nullptr || last->kind != CaptureRecord::Kind::signal) {
      s.fail("Stream::end_capture: a stream of PE " + std::to_string(record->lanes[lane]->pe()) +
             " joined the capture (wait_for) and its last work was not waited for again; make "
             "the capturing stream wait_for it before end_capture");
    }
  }
  for (const auto& e : record->entries) {
    if (e.kind != CaptureRecord::Kind::signal) ++graph.impl_->items;
  }
  graph.impl_->entries = std::move(record->entries);
  graph.impl_->lanes = std::move(record->lanes);
  graph.impl_->marks = record->marks;
  return graph;
}

Graph::Graph() = default;
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

Graph::operator bool() const { return impl_ != nullptr; }

std::size_t Graph::size() const { return impl_ ? impl_->items : 0; }

void Graph::launch(Stream& stream) {
  Stream::Impl& target = *stream.impl_;
  if (!impl_) {
    target.fail("Graph::launch: the graph holds no work (default-constructed or moved from)");
  }
  Impl& g = *impl_;
  if (g.native) {
    if (!target.native || target.native->device() != g.native->device()) {
      target.fail(
          "Graph::launch: a GPU graph replays on a native stream of the device it was "
          "captured on (device " +
          std::to_string(g.native->device()) + ")");
    }
    g.native->launch(*target.native);
    return;
  }
  if (target.native) {
    target.fail(
        "Graph::launch: the graph was captured on the host backend; it cannot replay "
        "on a GPU stream");
  }
  using Kind = CaptureRecord::Kind;
  auto run = [](std::shared_ptr<const std::function<void()>> fn) {
    return [fn = std::move(fn)] { (*fn)(); };
  };
  if (g.lanes.size() == 1 && target.capture) {
    // A replay inside another capture: recorded there, task by task.
    for (const auto& e : g.entries) stream.enqueue(run(e.fn));
    return;
  }
  for (std::size_t lane = 0; lane < g.lanes.size(); ++lane) {
    Stream& s = lane == 0 ? stream : *g.lanes[lane];
    if (s.capturing()) {
      target.fail(
          "Graph::launch: a graph captured over several streams cannot be captured "
          "again (one of its streams is capturing)");
    }
  }
  // Fresh marks for this replay's waits between lanes; each run of consecutive entries of one
  // lane is pushed under one lock (a one-lane graph: all of it at once).
  std::vector<std::shared_ptr<StreamMark>> marks(static_cast<std::size_t>(g.marks));
  for (auto& m : marks) m = std::make_shared<StreamMark>();
  auto task_of = [&](const CaptureRecord::Entry& e) {
    Stream::Impl::Task task;
    switch (e.kind) {
      case Kind::task:
        task.fn = run(e.fn);
        break;
      case Kind::signal:
        task.mark = marks[static_cast<std::size_t>(e.mark)];
        break;
      case Kind::wait:
        task.fn = wait_task(marks[static_cast<std::size_t>(e.mark)]);
        break;
    }
    return task;
  };
  for (std::size_t i = 0; i < g.entries.size();) {
    const int lane_of_run = g.entries[i].lane;
    Stream::Impl& lane =
        lane_of_run == 0 ? target : *g.lanes[static_cast<std::size_t>(lane_of_run)]->impl_;
    bool notify = false;
    {
      std::lock_guard lock(lane.mu);
      for (; i < g.entries.size() && g.entries[i].lane == lane_of_run; ++i) {
        notify = lane.push(task_of(g.entries[i])) || notify;
      }
    }
    if (notify) lane.wake.notify_one();
  }
}

}  // namespace tessera
