// heraldbench's driver of HET's released embedding cache, compiled with
// hetu/v1/src/hetu_cache/src of a checkout the user names (cache.cc, lru_cache.cc, lfu_cache.cc,
// lfuopt_cache.cc, hetu_client.cc, embedding.cc; never part of heraldbench).
//
// One released cache per worker (LRUCache, LFUCache or LFUOptCache, `limit` rows, embeddings of
// width 1: the values do not matter to the counts), and an in-process stand-in for the
// parameter server that applies the released server's rules (ps-lite/src/PSFhandle_embedding.cc):
//   * a sync request (keys with the versions the cache holds) returns each row whose version is
//     -1 (not cached) or trails the server's by more than the bound, with the server's version;
//   * a push adds its updates to each row's server version.
// Each iteration runs as HET's synchronous prefetching loop runs it (ParameterServerCommunicate's
// _compute_bsp_prefetch: push, barrier, pull of the next batch): every worker looks up its
// batch's keys (CacheBase::_embeddingLookup), then every worker updates them
// (CacheBase::_embeddingUpdate), so that no update of an iteration precedes a read of it.
// The stand-in server counts, per iteration: rows returned with version -1 (miss pulls) or
// stale (update pulls), rows of sync requests (version checks), and pushed rows, as evict
// pushes when the pushing cache no longer holds the row (its eviction list, or a row it did
// not keep) and as update pushes otherwise.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "lfu_cache.h"
#include "lfuopt_cache.h"
#include "lru_cache.h"
#include "ps/worker/hetu_binding.h"

namespace py = pybind11;

namespace {

enum Count { kMissPull, kUpdatePull, kEvictPush, kUpdatePush, kVersionChecks, kCounts };

// The stand-in parameter server: one table of versions, and what it was asked, per iteration.
struct Server {
    std::vector<int64_t> version;
    std::vector<hetu::CacheBase *> caches;  // by node id (the worker)
    int64_t *counts = nullptr;              // this iteration's row of counts, per worker
};
Server server;

int64_t &count(int worker, Count what) { return server.counts[worker * kCounts + what]; }

}  // namespace

namespace ps {

void syncEmbedding(int node_id, const SArray<uint64_t> &keys, const SArray<version_t> &ver,
                   version_t bound, PSFData<kSyncEmbedding>::Closure closure) {
    SArray<size_t> rows;
    SArray<version_t> versions;
    for (size_t i = 0; i < keys.size(); i++) {
        const version_t now = server.version[keys[i]];
        if (ver[i] == -1 || now - ver[i] > bound) {
            rows.resize(rows.size() + 1, i);
            versions.resize(versions.size() + 1, now);
            count(node_id, ver[i] == -1 ? kMissPull : kUpdatePull) += 1;
        }
    }
    count(node_id, kVersionChecks) += static_cast<int64_t>(keys.size());
    SArray<float> values(rows.size(), 0.0f);  // width 1; the values do not matter here
    closure(std::make_tuple(rows, versions, values), 0);
}

void PushEmbedding(int node_id, const SArray<uint64_t> &keys, const SArray<float> & /*data*/,
                   const SArray<version_t> &updates) {
    for (size_t i = 0; i < keys.size(); i++) {
        server.version[keys[i]] += updates[i];
        const bool kept = server.caches[node_id]->count(keys[i]) > 0;
        count(node_id, kept ? kUpdatePush : kEvictPush) += 1;
    }
}

void PushSyncEmbedding(int node_id, const SArray<uint64_t> &keys, const SArray<version_t> &ver,
                       version_t bound, PSFData<kSyncEmbedding>::Closure closure,
                       const SArray<uint64_t> &push_keys, const SArray<float> &data,
                       const SArray<version_t> &updates) {
    PushEmbedding(node_id, push_keys, data, updates);
    syncEmbedding(node_id, keys, ver, bound, closure);
}

}  // namespace ps

namespace {

std::unique_ptr<hetu::CacheBase> make_cache(const std::string &policy, size_t limit, size_t rows,
                                            int worker) {
    if (policy == "lru") return std::make_unique<hetu::LRUCache>(limit, rows, 1, worker);
    if (policy == "lfu") return std::make_unique<hetu::LFUCache>(limit, rows, 1, worker);
    if (policy == "lfuopt") return std::make_unique<hetu::LFUOptCache>(limit, rows, 1, worker);
    throw std::invalid_argument("policy must be lru, lfu or lfuopt, got " + policy);
}

// Copies still holding updates at the end (HET's caches never push them by themselves).
int64_t unpushed(hetu::CacheBase &cache, py::array_t<uint64_t> keys) {
    int64_t held = 0;
    for (auto key : std::vector<uint64_t>(keys.data(), keys.data() + keys.size()))
        held += cache.lookup(key)->getUpdates() != 0;
    return held;
}

// Runs `assign.shape[0]` iterations; `assign[t, i]` is the worker of sample t * B + i.
py::dict run(py::array_t<uint64_t, py::array::c_style | py::array::forcecast> samples,
             py::array_t<int64_t, py::array::c_style | py::array::forcecast> assign,
             size_t workers, size_t rows, size_t cache_rows, const std::string &policy,
             int64_t bound) {
    const size_t fields = samples.shape(1), iterations = assign.shape(0),
                 global_batch = assign.shape(1);
    std::vector<std::unique_ptr<hetu::CacheBase>> caches;
    server = Server();
    server.version.assign(rows, 0);
    for (size_t w = 0; w < workers; w++) {
        caches.push_back(make_cache(policy, cache_rows, rows, static_cast<int>(w)));
        caches.back()->setPullBound(bound);
        caches.back()->setPushBound(bound);
        server.caches.push_back(caches.back().get());
    }
    py::array_t<int64_t> counts({iterations, workers, static_cast<size_t>(kCounts)});
    std::fill(counts.mutable_data(), counts.mutable_data() + counts.size(), 0);
    const uint64_t *ids = samples.data();
    auto who = assign.unchecked<2>();
    std::vector<std::vector<uint64_t>> keys(workers);
    std::vector<float> buffer;
    for (size_t t = 0; t < iterations; t++) {
        server.counts = counts.mutable_data() + t * workers * kCounts;
        for (auto &k : keys) k.clear();
        for (size_t i = 0; i < global_batch; i++) {
            const uint64_t *sample = ids + (t * global_batch + i) * fields;
            keys[who(t, i)].insert(keys[who(t, i)].end(), sample, sample + fields);
        }
        for (size_t w = 0; w < workers; w++) {  // every worker's lookup, then every update
            buffer.assign(keys[w].size(), 0.0f);
            caches[w]->_embeddingLookup(SArray<uint64_t>(keys[w].data(), keys[w].size()),
                                        buffer.data());
        }
        for (size_t w = 0; w < workers; w++) {
            buffer.assign(keys[w].size(), 0.0f);
            caches[w]->_embeddingUpdate(SArray<uint64_t>(keys[w].data(), keys[w].size()),
                                        buffer.data());
        }
    }
    int64_t flush = 0;
    for (auto &cache : caches) {
        auto held = dynamic_cast<hetu::LRUCache *>(cache.get());
        if (held) flush += unpushed(*cache, held->PyAPI_keys());
        else if (auto lfu = dynamic_cast<hetu::LFUCache *>(cache.get()))
            flush += unpushed(*cache, lfu->PyAPI_keys());
        else flush += unpushed(*cache, dynamic_cast<hetu::LFUOptCache *>(cache.get())->PyAPI_keys());
    }
    server = Server();
    py::dict out;
    out["counts"] = counts;
    out["flush"] = flush;
    return out;
}

}  // namespace

PYBIND11_MODULE(_het_shim, m) {
    m.doc() = "heraldbench's driver of HET's released embedding cache";
    m.def("run", &run, py::arg("samples"), py::arg("assign"), py::arg("workers"), py::arg("rows"),
          py::arg("cache_rows"), py::arg("policy"), py::arg("bound"));
}
