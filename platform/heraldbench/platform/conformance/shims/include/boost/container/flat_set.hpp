// heraldbench's stand-in for <boost/container/flat_set.hpp>, so that Herald's released
// scheduler builds without Boost. That code uses a flat_set as an ordered set of unique keys
// (construct from a range, emplace, erase a key, clear, iterate in ascending order); std::set
// gives exactly that, in the same order.
#pragma once

#include <functional>
#include <memory>
#include <set>

namespace boost {
namespace container {

template <class Key, class Compare = std::less<Key>, class Allocator = std::allocator<Key>>
using flat_set = std::set<Key, Compare, Allocator>;

}  // namespace container
}  // namespace boost
