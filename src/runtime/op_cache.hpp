// OpCache: state the fused ops keep per Runtime between calls (all_gather's signal words per
// recv buffer, ...), owned by the Runtime and destroyed at finalize, so no op holds process-wide
// state. Each op keeps one value of a type of its own; the cache knows no op. Internal.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <typeindex>
#include <typeinfo>

namespace tessera::detail {

class OpCache {
 public:
  // The op's state of type `State`, default-constructed on first use; valid until clear(). The
  // state guards itself against concurrent use if it needs to.
  template <class State>
  State& get() {
    std::lock_guard lock(mu_);
    std::unique_ptr<Slot>& slot = states_[std::type_index(typeid(State))];
    if (!slot) slot = std::make_unique<Holder<State>>();
    return static_cast<Holder<State>&>(*slot).state;
  }

  // Destroys every op's state (at finalize: the heap blocks it names are gone with the heap).
  void clear() {
    std::map<std::type_index, std::unique_ptr<Slot>> states;
    {
      std::lock_guard lock(mu_);
      states.swap(states_);
    }
  }

 private:
  struct Slot {
    virtual ~Slot() = default;
  };
  template <class State>
  struct Holder final : Slot {
    State state;
  };
  std::mutex mu_;
  std::map<std::type_index, std::unique_ptr<Slot>> states_;
};

}  // namespace tessera::detail
