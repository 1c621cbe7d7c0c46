// heraldbench's stand-in for ps-lite's <common/sarray.h>, so that HET's released cache builds
// without ps-lite. Only what that cache and its client use: an array of values that owns them
// (made with a length, or copied from a pointer and a length), indexed and sized.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

template <typename V>
class SArray {
public:
    SArray() : values_(std::make_shared<std::vector<V>>()) {}
    explicit SArray(size_t size, V value = V()) :
        values_(std::make_shared<std::vector<V>>(size, value)) {}
    SArray(const V *data, size_t size, bool /*deletable*/ = false) :
        values_(std::make_shared<std::vector<V>>(data, data + size)) {}

    V *data() const { return values_->data(); }
    size_t size() const { return values_->size(); }
    bool empty() const { return values_->empty(); }
    void resize(size_t size, V value = V()) { values_->resize(size, value); }
    V &operator[](size_t i) const { return (*values_)[i]; }
    V *begin() const { return data(); }
    V *end() const { return data() + size(); }

private:
    std::shared_ptr<std::vector<V>> values_;
};
