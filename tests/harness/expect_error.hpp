// expect_error(code, fn): runs fn and returns the tessera::Error it throws; fails the test when
// it throws none or the code differs.
#pragma once

#include <gtest/gtest.h>

#include "tessera/error.hpp"

namespace tessera::harness {

template <class Fn>
Error expect_error(ErrorCode code, Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e;
  }
  ADD_FAILURE() << "expected tessera::Error(" << to_string(code) << ")";
  return Error(ErrorCode::internal, -1, "no error");
}

}  // namespace tessera::harness
