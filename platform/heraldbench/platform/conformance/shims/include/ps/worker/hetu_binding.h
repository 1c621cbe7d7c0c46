// heraldbench's stand-in for ps-lite's server API as HET's cache client calls it
// (ps/worker/hetu_binding.h): the functions the released client (hetu_client.cc) calls, with
// their signatures, answered in process by heraldbench's stand-in server (het_shim.cc), which
// applies the released server's version rule (ps-lite/src/PSFhandle_embedding.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <tuple>

#include <common/sarray.h>

namespace ps {

typedef int64_t version_t;

enum PsfType { kSyncEmbedding, kPushEmbedding, kPushSyncEmbedding };

template <PsfType>
struct PSFData;

template <>
struct PSFData<kSyncEmbedding> {
    // rows of the request to refresh, the server's version of each, their values
    using Response = std::tuple<SArray<size_t>, SArray<version_t>, SArray<float>>;
    typedef std::function<void(const Response &response, size_t offset)> Closure;
};

void syncEmbedding(int node_id, const SArray<uint64_t> &keys, const SArray<version_t> &ver,
                   version_t bound, PSFData<kSyncEmbedding>::Closure closure);

void PushEmbedding(int node_id, const SArray<uint64_t> &keys, const SArray<float> &data,
                   const SArray<version_t> &updates);

void PushSyncEmbedding(int node_id, const SArray<uint64_t> &keys, const SArray<version_t> &ver,
                       version_t bound, PSFData<kSyncEmbedding>::Closure closure,
                       const SArray<uint64_t> &push_keys, const SArray<float> &data,
                       const SArray<version_t> &updates);

}  // namespace ps
