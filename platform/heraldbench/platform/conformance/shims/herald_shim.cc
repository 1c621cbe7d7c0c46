// heraldbench's driver of Herald's released LAIA scheduler, compiled with laia/src of a checkout
// the user names (laia_scheduler.cc, array.cc, thread_pool.cc, utils.cc; never part of
// heraldbench).
//
// The released scheduler runs its loop (LaiaScheduler::launch) on a thread of its own and hands
// one rank's partition and sync plan to Python, with no counters. To see every worker's
// decisions and counts in every iteration, this driver sets the scheduler up with its own
// start() (an epoch count of 0 runs its loop zero times), then runs the loop's body itself, one
// iteration at a time, as launch() does:
//   * the released get_dist() decides the partition (dist) and each worker's sync plan (cplan);
//   * each worker's snapshot (the released MiniLRUCache) outdates the keys of its plan, then
//     gets the distinct keys of its samples in the released order (an ordered set: ascending);
//   * the counts are those of the same loop in topk_scheduler.cc: a get() of -2 is an update
//     pull; of 0 or 1 a miss pull, and 1 also a "miss push" (the insert evicted a valid key);
//     the plan's size is the worker's update pushes.
// Workers' snapshot updates touch only their own snapshot, so running them one after another is
// what the released thread pool computes. The last epoch's extra allocation (launch() runs
// batch_num_ + 1 iterations in its last epoch) is run too.
//
// Scheduler members are private; they are read here by compiling the released header with
// `private` spelt `public` in this file only (the layout is the same).

#include <algorithm>
#include <asm-generic/errno.h>
#include <atomic>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <iostream>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <set>
#include <sstream>
#include <string>
#include <sys/types.h>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include <boost/container/flat_set.hpp>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#define private public
#include "laia_scheduler.h"
#undef private

namespace py = pybind11;

namespace {

using Samples = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>;
using Int64s = py::array_t<int64_t>;

// The released code prints progress on std::cout; the driver's caller reads stdout.
class MutedStdout {
public:
    MutedStdout() : saved_(std::cout.rdbuf(sink_.rdbuf())) {}
    ~MutedStdout() { std::cout.rdbuf(saved_); }

private:
    std::ostringstream sink_;
    std::streambuf *saved_;
};

enum Count { kMissPull, kUpdatePull, kMissPush, kUpdatePush, kCounts };

// The body of LaiaScheduler::launch() for worker w, with topk_scheduler.cc's counters.
void read_snapshot(laia_cache::LaiaScheduler &s, const laia_cache::comm_plan_t &plan,
                   laia_cache::dist_t &dist, size_t w, int64_t *counts) {
    auto &snapshot = s.cache_snaps_[w];
    for (auto key : plan[w]) snapshot.outdate(key);
    std::set<laia_cache::emb_key_t> keys;
    for (size_t j = 0; j < s.mini_batch_size_; j++)
        for (size_t f = 0; f < s.num_table_; f++) keys.emplace(s.sample_embs_[dist[w][j]][f]);
    for (auto key : keys) {
        int res = snapshot.get(key);
        if (res == -2) {
            counts[kUpdatePull] += 1;
        } else if (res >= 0) {
            counts[kMissPull] += 1;
            counts[kMissPush] += res > 0;
        }
    }
    counts[kUpdatePush] += static_cast<int64_t>(plan[w].size());
}

// Runs `batches` iterations plus the extra allocation; returns per iteration and worker the
// samples (positions in `samples`), the sync plan's keys and the counts.
py::dict run(Samples samples, size_t workers, size_t batch_size, size_t batches,
             size_t cache_rows) {
    const size_t n = samples.shape(0), fields = samples.shape(1);
    auto scheduler = std::make_unique<laia_cache::LaiaScheduler>();
    {
        MutedStdout muted;
        scheduler->start(samples, n, fields, /*epoch_num=*/0, batch_size, batches, workers,
                         /*rank=*/0, cache_rows, /*num_threads=*/16, /*top_k_table=*/fields);
        scheduler->dist_thread_->join();  // its loop ran zero epochs
        scheduler->dist_thread_.reset();
    }
    const size_t iterations = batches + 1;
    Int64s dist_out({iterations, workers, batch_size});
    Int64s plan_sizes({iterations, workers});
    Int64s counts({iterations, workers, static_cast<size_t>(kCounts)});
    std::fill(counts.mutable_data(), counts.mutable_data() + counts.size(), 0);
    auto d = dist_out.mutable_unchecked<3>();
    auto p = plan_sizes.mutable_unchecked<2>();
    std::vector<int64_t> plan_keys;
    laia_cache::comm_plan_t plan(workers);
    laia_cache::dist_t dist(2, {workers, batch_size}, 0);
    for (size_t b = 0; b < iterations; b++) {
        scheduler->batch_id_ = b;
        scheduler->get_dist(plan, dist);
        for (size_t w = 0; w < workers; w++) {
            for (size_t j = 0; j < batch_size; j++) d(b, w, j) = static_cast<int64_t>(dist[w][j]);
            p(b, w) = static_cast<int64_t>(plan[w].size());
            plan_keys.insert(plan_keys.end(), plan[w].begin(), plan[w].end());
            read_snapshot(*scheduler, plan, dist, w,
                          counts.mutable_data() + (b * workers + w) * kCounts);
        }
    }
    py::dict out;
    out["dist"] = dist_out;
    out["plan_sizes"] = plan_sizes;
    out["plan_keys"] = Int64s(plan_keys.size(), plan_keys.data());
    out["counts"] = counts;
    return out;
}

}  // namespace

PYBIND11_MODULE(_herald_shim, m) {
    m.doc() = "heraldbench's driver of Herald's released LaiaScheduler";
    m.def("run", &run, py::arg("samples"), py::arg("workers"), py::arg("batch_size"),
          py::arg("batches"), py::arg("cache_rows"));
}
