// Include first in every test that sees libtorch: glog (pulled in by libtorch) defines its own CHECK
// macro, which would silently replace Catch's CHECK and make those assertions vanish.
#pragma once
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>
