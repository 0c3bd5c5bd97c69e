#pragma once
// The buffers behind a model's fields and how a time step moves them, the same on every backend
// (Buffer: a HostField on the CPU, a DeviceField on the GPU). See FieldRole (model.hpp).
#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "strata/core/error.hpp"
#include "strata/model.hpp"
#include "strata/problem.hpp"

namespace strata {

// "heat3d's fields (2 buffers of 3002 x 3002 x 3002 fp64 values with their ghosts)": what a
// memory refusal (memory.hpp) says is too large.
std::string fields_text(const ModelInfo& model, int buffers, const Extent& e, Precision p);
// What to try instead.
template <class T>
const char* memory_hint() {
    return sizeof(T) > 4 ? "try a smaller grid or fp32" : "try a smaller grid";
}

template <class Buffer, int N>
class FieldBuffers {
public:
    explicit FieldBuffers(const FieldDecl (&decl)[N]) : decl_(&decl[0]) {}

    const FieldDecl& decl(int f) const { return decl_[f]; }
    FieldRole role(int f) const { return decl_[f].role; }
    // The field's current values (a `previous` field's are its stencil field's other buffer).
    Buffer& current(int f) { return f > 0 && role(f) == FieldRole::previous ? next[f - 1] : cur[f]; }
    // Whether field f has a second buffer of its own: a stencil field whose other buffer is
    // scratch (no `previous` follows it), or a state field of a kernel that advances several
    // steps per pass (`copies`).
    bool scratch(int f, bool copies) const {
        return role(f) == FieldRole::stencil ? !(f + 1 < N && role(f + 1) == FieldRole::previous)
                                             : role(f) == FieldRole::state && copies;
    }
    // The buffers a backend allocates: each field's own, but for a `previous` field (its stencil
    // field's other buffer), and a second one for a stencil field, and for a state field when a
    // kernel advances several steps per pass (`copies`).
    bool has_current(int f) const { return role(f) != FieldRole::previous; }
    bool has_next(int f, bool copies) const {
        return role(f) == FieldRole::stencil || (role(f) == FieldRole::state && copies);
    }
    int count(bool copies) const {
        int n = 0;
        for (int f = 0; f < N; ++f) n += int(has_current(f)) + int(has_next(f, copies));
        return n;
    }
    int index(std::string_view name) const {
        for (int f = 0; f < N; ++f)
            if (name == decl_[f].name) return f;
        std::string known;
        for (int f = 0; f < N; ++f) known += std::string(known.empty() ? "" : ", ") + decl_[f].name;
        throw UsageError("the model has no field '" + std::string(name) + "' (it has " + known + ")");
    }

    // One step's pointers: stencil fields read one buffer and write the other; the rest are read
    // and written where they are (state in place).
    template <class T, class Ptr>
    FieldPtrs<T, N> step(const Ptr& ptr) {
        FieldPtrs<T, N> b{};
        for (int f = 0; f < N; ++f) {
            b.in[f] = ptr(current(f));
            b.out[f] = role(f) == FieldRole::stencil ? ptr(next[f]) : b.in[f];
        }
        return b;
    }
    // A pass of several steps reads every field where it is and writes stencil and state fields
    // into their second buffers (which must not alias what other blocks still read).
    template <class T, class Ptr>
    std::pair<FieldPtrs<T, N>, FieldPtrs<T, N>> pass(const Ptr& ptr) {
        FieldPtrs<T, N> rd{}, wr{};
        for (int f = 0; f < N; ++f) {
            rd.in[f] = rd.out[f] = ptr(current(f));
            const bool moves = role(f) == FieldRole::stencil || role(f) == FieldRole::state;
            wr.in[f] = wr.out[f] = moves ? ptr(next[f]) : rd.in[f];
        }
        return {rd, wr};
    }
    // After a step the stencil fields' buffers trade places; after a pass the state fields' too.
    void swap(bool state_too) {
        for (int f = 0; f < N; ++f)
            if (role(f) == FieldRole::stencil || (state_too && role(f) == FieldRole::state)) std::swap(cur[f], next[f]);
    }

    std::array<Buffer, N> cur, next;

private:
    const FieldDecl* decl_;  // N of them
};

}  // namespace strata
