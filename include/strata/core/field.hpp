#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "strata/core/types.hpp"

namespace strata {

// A field on the host: the interior plus its ghost layers, in one contiguous array.
template <class T>
struct HostField {
    Extent extent;
    std::vector<T> data;

    HostField() = default;
    explicit HostField(Extent e, T value = T(0)) : extent(e), data(e.padded_cells(), value) {}

    T& at(std::int64_t i, std::int64_t j, std::int64_t k = 0) { return data[extent.index(i, j, k)]; }
    const T& at(std::int64_t i, std::int64_t j, std::int64_t k = 0) const {
        return data[extent.index(i, j, k)];
    }
    T* ptr() { return data.data(); }
    const T* ptr() const { return data.data(); }
};

}  // namespace strata
