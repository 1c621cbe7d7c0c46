// heraldbench's stand-in for ps-lite's <common/thread_pool.h>. HET's cache hands its Python
// calls to a thread pool; heraldbench's driver calls the cache's synchronous methods instead,
// so this pool runs each task at once, on the caller's thread, and returns its finished future.
#pragma once

#include <functional>
#include <future>
#include <utility>

class ThreadPool {
public:
    static ThreadPool *Get() {
        static ThreadPool pool;
        return &pool;
    }

    template <class F, class... Args>
    std::future<void> Enqueue(F &&f, Args &&...args) {
        std::promise<void> done;
        std::invoke(std::forward<F>(f), std::forward<Args>(args)...);
        done.set_value();
        return done.get_future();
    }
};
