// Repetition counts for tests built with a sanitizer. AddressSanitizer and ThreadSanitizer slow
// instrumented loops by 2-15x, and the threads-mode suites run under both in CI (scripts/sanitize).
// ASan flags a bad access when it happens and TSan a race between accesses it watched, whatever
// the timing, so repetition adds little there: a sanitized build keeps every case and every code
// path but repeats each fewer times. Uninstrumented builds repeat as many times as before.
#pragma once

namespace tessera::harness {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// `normal` repetitions in an uninstrumented build, `sanitized` under a sanitizer.
template <class T>
constexpr T repetitions(T normal, T sanitized) {
  return kSanitized ? sanitized : normal;
}

}  // namespace tessera::harness
