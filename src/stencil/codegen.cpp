// A stencil file's model as C++ (codegen.hpp): the kernel functor with the interface the
// strategies take (that of the built-in 2D models, models/heat2d.hpp and aliev_panfilov.hpp, or
// the cells-only one of model.hpp), so that one set of strategy templates serves built-in and
// generated models, and the generated Problem class around it. Layout (below) says which a file
// gets; what no engine takes yet (position-dependent updates, a coefficient read at an offset, the
// mirror boundary beyond radius-1 stars) is refused where the file asks for it.
#include "stencil/codegen.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

namespace strata::stencil {

namespace {

// Where the statement starting with `keyword` is (the first line), for messages about it.
Where statement_at(const Spec& spec, const std::string& keyword) {
    std::istringstream in(spec.text);
    int line = 0;
    for (std::string l; std::getline(in, l);) {
        ++line;
        const std::size_t b = l.find_first_not_of(" \t");
        if (b != std::string::npos && l.compare(b, keyword.size(), keyword) == 0) return {line, int(b) + 1};
    }
    return {1, 1};
}

void walk(const Expr& e, const std::function<void(const Expr&)>& f) {
    f(e);
    for (const ExprPtr& a : e.args) walk(*a, f);
}

bool at_offset(const Expr& e) {
    if (e.kind == Expr::Kind::call && e.name == "lap") return true;
    if (e.kind != Expr::Kind::field) return false;
    for (int d : e.offset)
        if (d != 0) return true;
    return false;
}

// The field a read at an offset reads (lap's argument for lap).
const std::string& offset_field(const Expr& e) { return e.kind == Expr::Kind::call ? e.args[0]->name : e.name; }

// The orders a plane-sum model may sum u's six face neighbours in, each from its plane sums
// (planes_functor), so that every strategy of heat3d's ladder gives the file's bits:
// - chain, heat3d's: ((((u[-1,0,0] + u[1,0,0]) + u[0,-1,0]) + u[0,1,0]) + u[0,0,-1]) + u[0,0,1],
//   as a file writes it without brackets, and as `lap(u)` sums in 3D (faces_chain, expand_lap);
// - pairs, axis by axis: ((u[-1,0,0] + u[1,0,0]) + (u[0,-1,0] + u[0,1,0])) + (u[0,0,-1] +
//   u[0,0,1]), 2D lap's order carried to 3D (faces_pairs). Its partial sums hold two words per
//   cell instead of one (the plane below waits for the one above), so its temporal kernel runs
//   shallower or with fewer blocks (strategies.cuh).
enum class Faces { none, chain, pairs };

// One read of a linear term (linear_split): weight * u(offset), the weight a number times
// factors that read params only (numbers, params and functions of them), or their reciprocals.
struct Read {
    double number = 1;
    std::vector<std::pair<const Expr*, bool>> factors;  // (factor, divides)
    std::vector<int> offset;
};

// The generated model's fields: those read through neighbourhoods first, in the file's order (the
// strategies' `in`/`out`, or `in[h]`/`out[h]` for several), then those read and written at their
// cell only (`states`), then the coefficients.
//
// Five kinds of model come out. One has the interface of the built-in 2D models, which every 2D
// strategy takes (the sliding rows and temporal ones included): 2D, radius-1 star neighbourhoods,
// at most one pointwise field, no coefficients. Two have heat3d's interface (models/heat3d.hpp,
// core/plane_sums.hpp), which every 3D strategy of the radius-1 ladder takes (cached, async,
// temporal, tma...): 3D, one field, the zero boundary, radius 1, and either one term of the update
// a weighted sum of the field's reads, star or box (linear_split: plane sums of the model's own),
// or, failing that, its neighbours read only as the sum of its faces heat3d forms, in its order
// or pairs axis by axis, as often as the file likes (Faces: heat3d's PlaneSums). One has wave3d's interface
// (models/wave3d.hpp), which every radius-4 strategy takes (planes, async, tma...): a leapfrog
// (leapfrog_split). Any other (3D otherwise, wider or box neighbourhoods, coefficients, several
// pointwise fields, the fixed boundary) is `cells_only` (model.hpp): its update reads the
// neighbourhood cell by cell, which the CPU backends and, on the GPU, naive, smem, cached, (3D)
// stream and (2D) temporal serve.
struct Layout {
    std::vector<const FieldDef*> hoods, states, coefs;
    bool cells = false;
    bool planes = false;  // heat3d's interface: the field's face neighbours summed as plane sums
    Faces faces = Faces::none;  // (planes) the order of that sum
    // heat3d's interface with the model's own plane sums (linear_split): the term of the field's
    // update that reads its neighbourhood, a weighted sum of its reads; null for the other kinds.
    const Expr* sum = nullptr;
    std::vector<Read> reads;  // (sum) the term's reads, weighted, in the file's order
    // wave3d's interface (leapfrog_split): the field's update, and its term that reads the
    // neighbourhood (the strategies' `laplacian`); null for the other kinds.
    const Expr* next = nullptr;
    const Expr* lap = nullptr;
    int radius = 1;
    bool star = true;
    static constexpr int kMaxHoods = 4;
    static int find(const std::vector<const FieldDef*>& v, const std::string& name) {
        for (std::size_t h = 0; h < v.size(); ++h)
            if (v[h]->name == name) return int(h);
        return -1;
    }
    bool hood(const std::string& name) const { return find(hoods, name) >= 0; }
    bool coef(const std::string& name) const { return find(coefs, name) >= 0; }
    // A field's index among the model's fields: hoods, states, coefficients.
    int index(const std::string& name) const {
        if (int h = find(hoods, name); h >= 0) return h;
        if (int s = find(states, name); s >= 0) return int(hoods.size()) + s;
        return int(hoods.size() + states.size()) + find(coefs, name);
    }
    int fields() const { return int(hoods.size() + states.size() + coefs.size()); }
};

bool reads_face(const Expr* e, const std::string& u, int dx, int dy, int dz) {
    return e && e->kind == Expr::Kind::field && e->name == u && !e->updated &&
           e->offset == std::vector<int>{dx, dy, dz};
}
const Expr* added(const Expr& e, int arg) {
    return e.kind == Expr::Kind::binary && e.op == "+" ? e.args[std::size_t(arg)].get() : nullptr;
}

bool faces_chain(const Expr& e, const std::string& u) {
    static const int order[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
    const Expr* at = &e;
    for (int k = 5; k >= 0; --k) {
        const Expr* read = k > 0 ? added(*at, 1) : at;
        if (!reads_face(read, u, order[k][0], order[k][1], order[k][2])) return false;
        if (k > 0) at = at->args[0].get();
    }
    return true;
}
bool faces_pairs(const Expr& e, const std::string& u) {
    auto pair = [&](const Expr* p, int axis) {
        int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
        lo[axis] = -1, hi[axis] = 1;
        return p && reads_face(added(*p, 0), u, lo[0], lo[1], lo[2]) &&
               reads_face(added(*p, 1), u, hi[0], hi[1], hi[2]);
    };
    const Expr* plane = added(e, 0);
    return plane && pair(added(*plane, 0), 0) && pair(added(*plane, 1), 1) && pair(added(e, 1), 2);
}
Faces faces_sum(const Expr& e, const std::string& u) {
    return faces_chain(e, u) ? Faces::chain : faces_pairs(e, u) ? Faces::pairs : Faces::none;
}

// Whether every read of u in `e` is at its cell or inside a sum of its faces, all in one order
// (`order`: none until the first sum is met).
bool reads_faces_only(const Expr& e, const std::string& u, Faces& order) {
    auto take = [&](Faces f) {
        if (order != Faces::none && order != f) return false;
        order = f;
        return true;
    };
    if (const Faces f = faces_sum(e, u); f != Faces::none) return take(f);
    if (e.kind == Expr::Kind::call && e.name == "lap") return e.args[0]->name == u && take(Faces::chain);
    if (e.kind == Expr::Kind::field && e.name == u && !e.updated)
        return std::all_of(e.offset.begin(), e.offset.end(), [](int d) { return d == 0; });
    return std::all_of(e.args.begin(), e.args.end(),
                       [&](const ExprPtr& a) { return reads_faces_only(*a, u, order); });
}

// Whether e reads u's neighbourhood: u at an offset, lap, or a let (a leapfrog's lets are its
// neighbourhood's: leapfrog_split).
bool reads_neighbours(const Expr& e, const std::string& u) {
    if (e.kind == Expr::Kind::local || (at_offset(e) && offset_field(e) == u)) return true;
    return std::any_of(e.args.begin(), e.args.end(), [&](const ExprPtr& a) { return reads_neighbours(*a, u); });
}

// wave3d's split of a leapfrog, for a layout of one field u read through its neighbourhood, one
// pointwise field q and one coefficient (3D, a radius-4 star, the zero boundary): q' = u (u's
// value a step before, which the engine keeps in u's other buffer, FieldRole::previous, so q is
// never written), and u's update a pointwise function of u at its cell, q, the coefficient and
// one term that alone reads the neighbourhood: the smallest part of the expression that holds every
// read of u at an offset, lap and let, and reads no other field (wave3d's `laplacian`). The lets
// read u and params only (they are computed with that term). No new values are read. Returns u's
// update and the term (nulls where the file is not such a leapfrog). The term is computed apart
// and used where it stands, as wave3d computes its Laplacian: written in wave3d's order, the file
// gets wave3d's bits (StencilCuda.Wave8FileEqualsBuiltinBitwise).
std::pair<const Expr*, const Expr*> leapfrog_split(const Spec& spec, const Layout& l) {
    if (spec.dims != 3 || l.radius != 4 || !l.star || l.hoods.size() != 1 || l.states.size() != 1 ||
        l.coefs.size() != 1 || spec.boundary != Boundary::zero)
        return {};
    const std::string& u = l.hoods[0]->name;
    const Expr *next_u = nullptr, *next_q = nullptr;
    for (const Update& up : spec.updates) {
        bool fits = true;
        walk(*up.value, [&](const Expr& e) {
            fits = fits && !(e.kind == Expr::Kind::field && (e.updated || (up.local && e.name != u)));
        });
        if (!fits) return {};
        if (!up.local) (up.field == u ? next_u : next_q) = up.value.get();
    }
    if (!next_u || !next_q || next_q->kind != Expr::Kind::field || next_q->name != u || at_offset(*next_q)) return {};
    const Expr* term = next_u;
    while (term->kind != Expr::Kind::local && !at_offset(*term)) {
        const Expr* holder = nullptr;  // the one argument that holds every neighbourhood read, if one does
        int holding = 0;
        for (const ExprPtr& a : term->args)
            if (reads_neighbours(*a, u)) holder = a.get(), ++holding;
        if (holding != 1) break;
        term = holder;
    }
    if (!reads_neighbours(*term, u)) return {};
    bool fits = true;
    walk(*term, [&](const Expr& e) { fits = fits && !(e.kind == Expr::Kind::field && e.name != u); });
    std::function<void(const Expr&)> outside = [&](const Expr& e) {  // the rest: pointwise
        if (&e == term) return;
        fits = fits && e.kind != Expr::Kind::local && !(at_offset(e) && offset_field(e) == u);
        for (const ExprPtr& a : e.args) outside(*a);
    };
    outside(*next_u);
    return fits ? std::pair{next_u, term} : std::pair<const Expr*, const Expr*>{};
}

// Whether e reads params and numbers only: a weight's factor.
bool constant(const Expr& e) {
    bool c = true;
    walk(e, [&](const Expr& x) {
        c = c && x.kind != Expr::Kind::field && x.kind != Expr::Kind::local && x.kind != Expr::Kind::coordinate &&
            !(x.kind == Expr::Kind::call && x.name == "lap") &&
            !(x.kind == Expr::Kind::binary && x.op != "+" && x.op != "-" && x.op != "*" && x.op != "/");
    });
    return c;
}

// e as a weighted sum of u's reads, each weighted by `w` times what e multiplies it by; false
// where e is not linear in u or reads anything else.
bool linear(const Expr& e, const Spec& spec, const std::string& u, const Read& w, std::vector<Read>& out) {
    auto scaled = [&](const Expr& k, bool divides) {
        Read s = w;
        if (k.kind == Expr::Kind::number)
            s.number = divides ? s.number / k.value : s.number * k.value;
        else
            s.factors.emplace_back(&k, divides);
        return s;
    };
    auto negated = [&] {
        Read s = w;
        s.number = -s.number;
        return s;
    };
    switch (e.kind) {
        case Expr::Kind::field: {
            if (e.name != u || e.updated) return false;
            Read r = w;
            r.offset = e.offset;
            if (r.number != 0) out.push_back(r);
            return true;
        }
        case Expr::Kind::call:
            return e.name == "lap" && e.args[0]->name == u &&
                   linear(*expand_lap(u, spec.dims, e.at), spec, u, w, out);
        case Expr::Kind::unary: return e.op == "-" && linear(*e.args[0], spec, u, negated(), out);
        case Expr::Kind::binary: {
            const Expr &a = *e.args[0], &b = *e.args[1];
            if (e.op == "+") return linear(a, spec, u, w, out) && linear(b, spec, u, w, out);
            if (e.op == "-") return linear(a, spec, u, w, out) && linear(b, spec, u, negated(), out);
            if (e.op == "*" && constant(a)) return linear(b, spec, u, scaled(a, false), out);
            if (e.op == "*" && constant(b)) return linear(a, spec, u, scaled(b, false), out);
            if (e.op == "/" && constant(b)) return linear(a, spec, u, scaled(b, true), out);
            return false;
        }
        default: return false;  // a constant alone, a local: not a read of u
    }
}

// The split of a 3D radius-1 field's update that any plane-sum strategy takes, whatever the
// file's neighbourhood (star or box, any weights, lap or spelled out): for a layout of one field
// u read through its neighbourhood and nothing else (the zero boundary), the smallest part of u's
// update that holds every read of u at an offset (the term), where the term is a sum of u's reads
// weighted by params and numbers, and no let reads u at an offset. Returns the term and its reads
// (null where the file is not so). The model sums each plane's reads by weight once for the
// planes that read it (linear_functor): the file's additions regrouped plane by plane, so its
// values round apart from the file's order (within the precision's tolerance: the CPU backends
// run the same sums), but for the faces in heat3d's order (lap's), which regroup into heat3d's
// own additions: heat3d's bits (StencilRun.Heat7FileEqualsBuiltinBitwise*).
std::pair<const Expr*, std::vector<Read>> linear_split(const Spec& spec, const Layout& l) {
    if (spec.dims != 3 || l.radius != 1 || l.hoods.size() != 1 || !l.states.empty() || !l.coefs.empty() ||
        spec.boundary != Boundary::zero)
        return {};
    const std::string& u = l.hoods[0]->name;
    auto holds = [&](const Expr& e) {
        bool any = false;
        walk(e, [&](const Expr& x) { any = any || (at_offset(x) && offset_field(x) == u); });
        return any;
    };
    const Expr* next = nullptr;
    for (const Update& up : spec.updates) {
        if (up.local && holds(*up.value)) return {};
        if (!up.local) next = up.value.get();
    }
    if (!next || !holds(*next)) return {};
    const Expr* term = next;
    while (!at_offset(*term)) {
        const Expr* holder = nullptr;
        int holding = 0;
        for (const ExprPtr& a : term->args)
            if (holds(*a)) holder = a.get(), ++holding;
        if (holding != 1) break;
        term = holder;
    }
    std::vector<Read> reads;
    if (!linear(*term, spec, u, Read{}, reads) || reads.empty()) return {};
    return {term, reads};
}

Layout plan(const Spec& spec) {
    const std::string supported =
        " (generated models take, so far: up to 4 fields read through neighbourhoods of radius up to 4, fields "
        "and coefficients read at their cell, the zero, fixed, mirror (radius 1, star) or periodic boundary, "
        "values from expressions or files)";
    Layout l;
    for (const Update& u : spec.updates)
        walk(*u.value, [&](const Expr& e) {
            if (e.kind == Expr::Kind::coordinate)
                throw error_at(spec, e.at, "an update that depends on the position cannot run yet" + supported);
            if (!at_offset(e)) return;
            const FieldDef* f = spec.field(offset_field(e));
            if (f->coefficient)
                throw error_at(spec, e.at,
                               "a coefficient read at an offset cannot run yet: read it at its cell (" + f->name +
                                   ")" + supported);
            if (!l.hood(f->name)) {
                if (int(l.hoods.size()) == Layout::kMaxHoods)
                    throw error_at(spec, e.at,
                                   "a fifth field read through a neighbourhood cannot run yet" + supported);
                l.hoods.push_back(f);
            }
        });
    std::vector<const FieldDef*> hoods;  // in the file's order
    for (const FieldDef& f : spec.fields)
        if (l.hood(f.name)) hoods.push_back(&f);
    l.hoods = hoods;
    for (const FieldDef& f : spec.fields) {
        if (l.hood(f.name)) continue;
        if (f.coefficient)
            l.coefs.push_back(&f);
        else if (l.hoods.empty())  // no neighbourhood at all: the first field takes the strategies' stencil role
            l.hoods.push_back(&f);
        else
            l.states.push_back(&f);
    }
    const auto reach = spec.reach();
    l.radius = 1;
    for (const auto& [name, r] : reach) {
        l.radius = std::max(l.radius, r.radius);
        l.star = l.star && r.star;
    }
    l.cells = spec.dims == 3 || l.radius > 1 || !l.star || !l.coefs.empty() || l.states.size() > 1 ||
              spec.boundary == Boundary::fixed;
    // One weighted sum first (heat3d's own order, lap's, gives heat3d's bits that way too); the
    // faces' sum read several times, or inside what is not a weighted sum, by heat3d's PlaneSums.
    std::tie(l.sum, l.reads) = linear_split(spec, l);
    l.planes = !l.sum && spec.dims == 3 && l.radius == 1 && l.star && l.hoods.size() == 1 && l.states.empty() &&
               l.coefs.empty() && spec.boundary == Boundary::zero &&
               std::all_of(spec.updates.begin(), spec.updates.end(), [&](const Update& u) {
                   return reads_faces_only(*u.value, l.hoods[0]->name, l.faces);
               });
    if (l.planes || l.sum) l.cells = false;
    std::tie(l.next, l.lap) = leapfrog_split(spec, l);
    if (l.lap) l.cells = false;
    if (spec.boundary == Boundary::mirror && (l.radius > 1 || !l.star))
        throw error_at(spec, statement_at(spec, "boundary"),
                       std::string("the mirror boundary (a ghost cell takes the value two cells inward, corners "
                                   "unset) serves radius-1 star stencils, and this one reads ") +
                           (l.radius > 1 ? "radius " + std::to_string(l.radius) : std::string("a box")) + supported);
    return l;
}

// The distinct offsets the neighbourhood reads reach (lap's spelled out), the centre included:
// the model's stencil points.
int stencil_points(const Spec& spec) {
    std::set<std::vector<int>> points{std::vector<int>(std::size_t(spec.dims), 0)};
    std::function<void(const Expr&)> visit = [&](const Expr& e) {
        if (e.kind == Expr::Kind::call && e.name == "lap") return visit(*expand_lap(e.args[0]->name, spec.dims, e.at));
        if (e.kind == Expr::Kind::field && !e.updated) points.insert(e.offset);
        for (const ExprPtr& a : e.args) visit(*a);
    };
    for (const Update& u : spec.updates) visit(*u.value);
    return int(points.size());
}

// Concatenation in one buffer (and clear of g++ 12's false -Wrestrict on chains of operator+).
std::string cat(std::initializer_list<std::string_view> parts) {
    std::string s;
    for (std::string_view p : parts) s += p;
    return s;
}

std::string number(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// An expression as C++ of type `T` (the kernel) or double (`initial`: the initial values).
class Emitter {
public:
    Emitter(const Spec& spec, const Layout* layout) : spec_(spec), layout_(layout) {}
    // The emitter of a leapfrog's pointwise update (leapfrog_split): `term` is `lap`, and the
    // neighbourhood field (read at its cell only) is `own`.
    Emitter pointwise(const Expr* term, std::string own, std::string term_name = "lap") const {
        Emitter e = *this;
        e.term_ = term;
        e.own_ = std::move(own);
        e.term_name_ = std::move(term_name);
        return e;
    }
    // The emitter that writes each let's expression where the let is read, instead of its name.
    // On the GPU that decides the bits: nvcc fuses a multiply and an add into one FMA where it
    // can, and which product of `a * b + c * d` it fuses follows the order the values are computed
    // in. wave8.stencil's rings as lets computed first gave other bits than wave3d's `laplacian`,
    // one expression; written out in the term, wave3d's bits (docs/runs/65).
    Emitter inline_lets() const {
        Emitter e = *this;
        e.inline_lets_ = true;
        return e;
    }

    std::string operator()(const Expr& e) const {
        auto arg = [&](int i) { return (*this)(*e.args[std::size_t(i)]); };
        const std::string t = layout_ ? "R" : "double";
        if (&e == term_) return term_name_;
        switch (e.kind) {
            case Expr::Kind::number: return cat({t, "(", number(e.value), ")"});
            case Expr::Kind::param:
                return layout_ ? cat({"p_", e.name}) : cat({"p[", std::to_string(param_index(e.name)), "]"});
            case Expr::Kind::coordinate: return e.name;  // initial values only (plan() refuses them in updates)
            case Expr::Kind::local:
                if (inline_lets_)
                    for (const Update& u : spec_.updates)
                        if (u.local && u.field == e.name) return (*this)(*u.value);
                return cat({"l_", e.name});
            case Expr::Kind::grid: break;  // params' formulas only: resolved on the host, never generated
            case Expr::Kind::field: {
                if (e.updated) return cat({"n_", e.name});
                if (layout_ && layout_->planes) return "c";  // (reads_faces_only: the cell's own value)
                if (layout_->coef(e.name)) return cat({"k_", e.name});
                if (!layout_->hood(e.name)) return cat({"s_", e.name});
                if (!own_.empty()) return own_;
                std::string at = layout_->hoods.size() > 1 ? std::to_string(layout_->index(e.name)) : "";
                for (int d : e.offset) at += cat({at.empty() ? "" : ", ", std::to_string(d)});
                return cat({"R(nb(", at, "))"});  // (a 16-bit value widened: the arithmetic's type)
            }
            case Expr::Kind::unary:
                return e.op == "-" ? cat({"(-", arg(0), ")"}) : cat({t, "(", arg(0), " == ", t, "(0))"});
            case Expr::Kind::binary: {
                if (layout_ && layout_->planes && faces_sum(e, layout_->hoods[0]->name) == layout_->faces)
                    return "faces";
                const std::string& op = e.op;
                if (op == "+" || op == "-" || op == "*") return cat({"(", arg(0), " ", op, " ", arg(1), ")"});
                if (op == "/") return cat({"strata::divide(", arg(0), ", ", arg(1), ")"});  // a / b's bits (core/hd.hpp)
                if (op == "&&" || op == "||")
                    return cat({t, "((", arg(0), " != ", t, "(0)) ", op, " (", arg(1), " != ", t, "(0)))"});
                return cat({t, "(", arg(0), " ", op, " ", arg(1), ")"});  // a comparison: 1 or 0
            }
            case Expr::Kind::call:
                if (e.name == "lap") return (*this)(*expand_lap(e.args[0]->name, spec_.dims, e.at));
                if (e.args.size() == 2) return cat({"fn::", e.name, "(", arg(0), ", ", arg(1), ")"});
                return cat({"fn::", e.name, "(", arg(0), ")"});
        }
        return "";
    }

private:
    int param_index(const std::string& name) const {
        for (std::size_t i = 0; i < spec_.params.size(); ++i)
            if (spec_.params[i].first == name) return int(i);
        return -1;  // the parser resolved every name
    }
    const Spec& spec_;
    const Layout* layout_;  // null: initial values (params from an array, no fields)
    const Expr* term_ = nullptr;
    std::string own_, term_name_;
    bool inline_lets_ = false;
};

// The params as the functor's members in the precision, set from the run's values.
void params_and_constructor(std::ostream& o, const Spec& spec) {
    for (const auto& [name, value] : spec.params) o << "    R p_" << name << ";\n";
    o << "\n    explicit Kernel(const double* p)";
    for (std::size_t i = 0; i < spec.params.size(); ++i)
        o << (i ? ", " : " : ") << "p_" << spec.params[i].first << "(R(p[" << i << "]))";
    o << " { (void)p; }\n\n";
}

// The rest of a cells-only model's functor (model.hpp): its Fields, the Point of the values read
// and written at the cell (pointwise fields and coefficients), `next_values` that computes the
// updates and lets in the file's order, `write_values` that writes every field, and `store`, the
// two at once. The temporal strategy keeps the values of several steps on chip between them.
void cells_functor(std::ostream& o, const Spec& spec, const Layout& l, const Emitter& kernel) {
    const int H = int(l.hoods.size()), S = int(l.states.size()), C = int(l.coefs.size()), N = l.fields();
    auto names = [](const std::vector<const FieldDef*>& v) {
        std::string s;
        for (const FieldDef* f : v) s += cat({s.empty() ? "" : ", ", f->name});
        return s;
    };
    o << "    struct Fields {\n";
    if (H > 1)
        o << "        const T* in[" << H << "];  // " << names(l.hoods) << " now\n        T* out[" << H
          << "];       // and next\n";
    else
        o << "        const T* in;  // " << names(l.hoods) << " now\n        T* out;       // and next\n";
    if (S) o << "        T* s[" << S << "];  // " << names(l.states) << ", in place\n";
    if (C) o << "        const T* c[" << C << "];  // " << names(l.coefs) << ", constant\n";
    o << "    };\n";
    if (S || C) {
        o << "    struct Point {  // the values at the cell\n";
        if (S) o << "        T s[" << S << "];\n";
        if (C) o << "        T c[" << C << "];\n";
        o << "    };\n\n";
    } else {
        o << "    struct Point {};\n\n";
    }
    params_and_constructor(o, spec);
    o << "    STRATA_HD static Fields bind(const FieldPtrs<T, " << N << ">& b) {\n        Fields f{};\n";
    if (H > 1)
        o << "        for (int h = 0; h < " << H << "; ++h) f.in[h] = b.in[h], f.out[h] = b.out[h];\n";
    else
        o << "        f.in = b.in[0];\n        f.out = b.out[0];\n";
    if (S) o << "        for (int n = 0; n < " << S << "; ++n) f.s[n] = b.out[" << H << " + n];\n";
    if (C) o << "        for (int n = 0; n < " << C << "; ++n) f.c[n] = b.in[" << H + S << " + n];\n";
    o << "        return f;\n    }\n"
      << "    STRATA_HD Point load_point(const Fields& f, std::int64_t i) const {\n"
      << "        Point p{};\n        (void)f, (void)i;\n";
    if (S) o << "        for (int n = 0; n < " << S << "; ++n) p.s[n] = f.s[n][i];\n";
    if (C) o << "        for (int n = 0; n < " << C << "; ++n) p.c[n] = f.c[n][i];\n";
    o << "        return p;\n    }\n\n"
      << "    // The cell's new values: its neighbourhood fields' into u (in the model's order), its\n"
      << "    // pointwise fields' into p (every update reads the old values).\n"
      << "    template <class Nb>\n"
      << "    STRATA_HD void next_values(const Nb& nb, Point& p, T (&u)[" << H << "]) const {\n"
      << "        (void)nb, (void)p;\n";
    for (int n = 0; n < S; ++n) {
        const std::string& name = l.states[std::size_t(n)]->name;
        o << "        const R s_" << name << " = p.s[" << n << "];\n        (void)s_" << name << ";\n";
    }
    for (int n = 0; n < C; ++n) {
        const std::string& name = l.coefs[std::size_t(n)]->name;
        o << "        const R k_" << name << " = p.c[" << n << "];\n        (void)k_" << name << ";\n";
    }
    for (const Update& u : spec.updates)
        o << "        const R " << (u.local ? "l_" : "n_") << u.field << " = " << kernel(*u.value) << ";\n";
    for (int h = 0; h < H; ++h) o << "        u[" << h << "] = n_" << l.hoods[std::size_t(h)]->name << ";\n";
    for (int n = 0; n < S; ++n)
        o << "        p.s[" << n << "] = n_" << l.states[std::size_t(n)]->name << ";\n";
    o << "    }\n"
      << "    // Where they go: the neighbourhood fields' second buffers; the pointwise fields in place.\n"
      << "    STRATA_HD void write_values(const T (&u)[" << H
      << "], const Point& p, const Fields& f, std::int64_t i) const {\n"
      << "        (void)p;\n";
    for (int h = 0; h < H; ++h) {
        o << "        f.out";
        if (H > 1) o << "[" << h << "]";
        o << "[i] = u[" << h << "];\n";
    }
    for (int n = 0; n < S; ++n) o << "        f.s[" << n << "][i] = p.s[" << n << "];\n";
    o << "    }\n"
      << "    template <class Nb>\n"
      << "    STRATA_HD void store(const Nb& nb, Point p, const Fields& f, std::int64_t i) const {\n"
      << "        T u[" << H
      << "];\n        next_values(nb, p, u);\n        write_values(u, p, f, i);\n    }\n";
}

// The rest of a plane-sum model's functor (both kinds: planes_functor, linear_functor), from
// inside `finish`: the file's updates and lets (`term` writes them), then update_planes, update,
// store and store_planes, heat3d's interface over the model's Sums.
void plane_model_rest(std::ostream& o, const Spec& spec, const std::string& u, const Emitter& term) {
    for (const Update& up : spec.updates)
        o << "        const R " << (up.local ? "l_" : "n_") << up.field << " = " << term(*up.value) << ";\n";
    o << "        return n_" << u << ";\n    }\n"
      << "    STRATA_HD R update_planes(const Sums& below, const Sums& at, const Sums& above) const {\n"
      << "        return finish(at, partial(below, at), above);\n    }\n"
      << "    // `u(di, dj, dk)` reads the old field at an offset.\n"
      << "    template <class Nb>\n    STRATA_HD R update(const Nb& u) const {\n"
      << "        auto plane = [&](int dk) { return plane_sums([&](int di, int dj) { return R(u(di, dj, dk)); }); };\n"
      << "        return update_planes(plane(-1), plane(0), plane(1));\n    }\n"
      << "    template <class Nb>\n"
      << "    STRATA_HD void store(const Nb& u, Point, const Fields& f, std::int64_t i) const { f.out[i] = update(u); }\n"
      << "    STRATA_HD void store_planes(const Sums& below, const Sums& at, const Sums& above, Point, const Fields& f,\n"
      << "                                std::int64_t i) const {\n"
      << "        f.out[i] = update_planes(below, at, above);\n    }\n";
}

// The rest of a plane-sum model's functor: heat3d's interface (models/heat3d.hpp) with the file's
// updates in `finish`, where the field's own value is `c` and the sum of its faces `faces`, summed
// from the plane sums in the file's order (Faces): heat3d's chain (lap's) gives heat3d's bits, the
// pairs theirs, on every strategy that takes them.
void planes_functor(std::ostream& o, const Spec& spec, const Layout& l, const Emitter& kernel) {
    const std::string& u = l.hoods[0]->name;
    const bool chain = l.faces == Faces::chain;
    o << "    struct Fields {\n        const T* in;  // " << u << " now\n        T* out;       // " << u
      << " next\n    };\n    struct Point {};\n\n";
    params_and_constructor(o, spec);
    o << "    STRATA_HD static Fields bind(const FieldPtrs<T, 1>& b) { return {b.in[0], b.out[0]}; }\n"
      << "    STRATA_HD Point load_point(const Fields& f, std::int64_t i) const { (void)f, (void)i; return "
         "{}; }\n\n"
      << "    using Sums = PlaneSums<R>;\n"
      << "    // `u(di, dj)` reads one plane at an in-plane offset.\n"
      << "    template <class Nb2>\n    STRATA_HD PlaneSums<R> plane_sums(const Nb2& u) const {\n"
      << "        PlaneSums<R> s;\n        s.center = u(0, 0);\n"
      << (chain ? "        s.edge = u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1);\n"
                : "        s.edge = (u(-1, 0) + u(1, 0)) + (u(0, -1) + u(0, 1));\n")
      << "        s.corner = R(0);\n        return s;\n    }\n"
      << "    struct Partial {\n        R faces, edges, corners;\n    };\n"
      << "    static constexpr int partial_words = " << (chain ? 1 : 2) << ";  // (temporal3d.cuh)\n"
      << "    STRATA_HD Partial partial(const PlaneSums<R>& below, const PlaneSums<R>& at) const {\n"
      << (chain ? "        return {at.edge + below.center, R(0), R(0)};\n    }\n"
                : "        return {at.edge, below.center, R(0)};  // (the plane below waits for the one "
                  "above)\n    }\n")
      << "    STRATA_HD R finish(const PlaneSums<R>& at, const Partial& p, const PlaneSums<R>& above) const "
         "{\n"
      << (chain ? "        const R c = at.center, faces = p.faces + above.center;\n"
                : "        const R c = at.center, faces = p.faces + (p.edges + above.center);\n")
      << "        (void)c, (void)faces;\n";
    plane_model_rest(o, spec, u, kernel);
}

// The rest of a linear term's functor (linear_split): heat3d's interface with the model's own
// plane sums. Plane z+dz of a cell's update contributes the sum of the term's reads at that dz,
// weighted: an in-plane pattern of (weight, dx, dy). Sums holds, per plane, its centre (the
// field's own value where the update reads it outside the term) and the sum of each distinct
// pattern, taken once per plane for the three cells it feeds (a symmetric stencil's z-1 and z+1
// patterns are one). Each pattern's reads are added by weight, in the file's order, then
// multiplied once by their weight (the weights are computed once, in double, from the params).
// The term of plane z is ((below's + at's) + above's): `partial` the first two, one word.
void linear_functor(std::ostream& o, const Spec& spec, const Layout& l, const Emitter& kernel) {
    const std::string& u = l.hoods[0]->name;
    const Emitter host(spec, nullptr);
    // Each offset's weight: its reads' summed (those of one set of factors by their numbers), as
    // C++ in double; the distinct weights numbered, "+" and "-" marking 1 and -1.
    std::vector<std::vector<int>> offsets;
    std::vector<std::vector<std::pair<double, std::string>>> terms;  // per offset: (number, factors)
    for (const Read& r : l.reads) {
        std::vector<std::string> f;
        for (const auto& [e, divides] : r.factors) f.push_back(cat({" * ", divides ? "(1.0 / " : "(", host(*e), ")"}));
        std::sort(f.begin(), f.end());
        std::string factors;
        for (const std::string& x : f) factors += x;
        const auto at = std::find(offsets.begin(), offsets.end(), r.offset);
        if (at == offsets.end()) offsets.push_back(r.offset), terms.emplace_back();
        auto& t = terms[std::size_t(std::find(offsets.begin(), offsets.end(), r.offset) - offsets.begin())];
        const auto same = std::find_if(t.begin(), t.end(), [&](const auto& x) { return x.second == factors; });
        if (same == t.end())
            t.emplace_back(r.number, factors);
        else
            same->first += r.number;
    }
    std::vector<std::string> codes, signs;  // distinct weights: their C++ (double), "+"/"-" for 1/-1
    std::vector<int> weight(offsets.size(), -1);  // per offset (-1: 0, not read)
    for (std::size_t n = 0; n < offsets.size(); ++n) {
        std::string code;
        int kept = 0;
        for (const auto& [number_of, factors] : terms[n])
            if (number_of == 0) continue;
            else if (factors.empty() || std::abs(number_of) != 1)
                code += cat({kept++ ? " + " : "", number(number_of), factors});
            else  // (1 * x written x)
                code += cat({kept++ ? " + " : "", number_of < 0 ? "-" : "", std::string_view(factors).substr(3)});
        if (!kept) continue;
        const auto at = std::find(codes.begin(), codes.end(), code);
        weight[n] = int(at - codes.begin());
        if (at != codes.end()) continue;
        codes.push_back(code);
        signs.push_back(code == "1" ? "+" : code == "-1" ? "-" : "");
    }
    // The patterns: (weight, dx, dy) in the file's order, per dz, but the cell's own read; the
    // distinct ones numbered. The cell's own value, weighted, joins the term in `finish`, after
    // the planes' sums (`lap(u)` is then heat3d's faces - 6 c, its bits).
    const std::vector<int> centre(3, 0);
    std::vector<bool> member_used(codes.size(), false);  // a weight the sums multiply by
    std::string own = "t";  // the term, where the update reads it
    using Pattern = std::vector<std::array<int, 3>>;
    std::vector<Pattern> patterns;
    int member[3] = {-1, -1, -1};  // dz + 1 -> its pattern's Sums member (-1: none)
    for (std::size_t n = 0; n < offsets.size(); ++n) {
        if (weight[n] < 0) continue;
        const std::size_t w = std::size_t(weight[n]);
        const std::string& code = codes[w];
        const bool literal = code.find_first_not_of("-0123456789.e+") == std::string::npos;
        if (offsets[n] != centre)
            member_used[w] = member_used[w] || signs[w].empty();
        else if (!signs[w].empty())
            own = cat({"(t ", signs[w], " c)"});
        else if (literal)
            own = code[0] == '-' ? cat({"(t - (R(", std::string_view(code).substr(1), ") * c))"})
                                 : cat({"(t + (R(", code, ") * c))"});
        else
            own = cat({"(t + (w", std::to_string(w), " * c))"}), member_used[w] = true;
    }
    for (int dz = -1; dz <= 1; ++dz) {
        Pattern p;
        for (std::size_t n = 0; n < offsets.size(); ++n)
            if (offsets[n][2] == dz && weight[n] >= 0 && offsets[n] != centre)
                p.push_back({weight[n], offsets[n][0], offsets[n][1]});
        if (p.empty()) continue;
        const auto at = std::find(patterns.begin(), patterns.end(), p);
        member[dz + 1] = int(at - patterns.begin());
        if (at == patterns.end()) patterns.push_back(p);
    }
    auto sum_of = [&](const Pattern& p) {  // grouped by weight, in order of first appearance
        std::vector<int> order;
        for (const auto& r : p)
            if (std::find(order.begin(), order.end(), r[0]) == order.end()) order.push_back(r[0]);
        std::string s;
        for (int w : order) {
            std::string reads;
            int n = 0;
            for (const auto& r : p)
                if (r[0] == w)
                    reads += cat({n++ ? " + " : "", "u(", std::to_string(r[1]), ", ", std::to_string(r[2]), ")"});
            if (n > 1) reads = cat({"(", reads, ")"});
            const std::string& sign = signs[std::size_t(w)];
            if (sign == "-")
                s += cat({s.empty() ? "-" : " - ", reads});
            else if (sign == "+")
                s += cat({s.empty() ? "" : " + ", reads});
            else
                s += cat({s.empty() ? "" : " + ", "w", std::to_string(w), " * ", reads});
        }
        return s;
    };
    // A pattern of the plane's own centre alone (a star's planes above and below) is no sum of its
    // own: the centre, weighted where it is used. Its own member would hold the same value as
    // `center` in the pipelines' register queues, a register per cell and level more (the 7-point
    // heat file spilled at depth 4 with one: 64 bytes a thread, 619 against heat3d's 915 GCells/s).
    auto centre_only = [&](int p) {
        const Pattern& q = patterns[std::size_t(p)];
        return q.size() == 1 && q[0][1] == 0 && q[0][2] == 0;
    };
    auto part = [&](const char* plane, int dz) {
        const int p = member[dz + 1];
        if (p < 0) return std::string();
        if (!centre_only(p)) return cat({plane, ".s", std::to_string(p)});
        const int w = patterns[std::size_t(p)][0][0];
        const std::string& sign = signs[std::size_t(w)];
        return sign == "+"   ? cat({plane, ".center"})
               : sign == "-" ? cat({"(-", plane, ".center)"})
                             : cat({"w", std::to_string(w), " * ", plane, ".center"});
    };
    auto named = [&](int dz) {
        const int p = member[dz + 1];
        return p < 0 ? std::string(" none") : centre_only(p) ? " its centre" : " s" + std::to_string(p);
    };

    o << "    struct Fields {\n        const T* in;  // " << u << " now\n        T* out;       // " << u
      << " next\n    };\n    struct Point {};\n\n";
    for (const auto& [name, value] : spec.params) o << "    R p_" << name << ";\n";
    std::string members, inits;  // the weights but 1 and -1 (added and subtracted) and literals
    for (std::size_t w = 0; w < codes.size(); ++w) {
        if (!member_used[w]) continue;
        members += cat({members.empty() ? "    R w" : ", w", std::to_string(w)});
        inits += cat({", w", std::to_string(w), "(R(", codes[w], "))"});
    }
    if (!members.empty()) o << members << ";  // the weights, from the params\n";
    o << "\n    explicit Kernel(const double* p)";
    for (std::size_t i = 0; i < spec.params.size(); ++i)
        o << (i ? ", " : " : ") << "p_" << spec.params[i].first << "(R(p[" << i << "]))";
    if (!inits.empty()) o << (spec.params.empty() ? " : " + inits.substr(2) : inits);
    o << " { (void)p; }\n\n"
      << "    STRATA_HD static Fields bind(const FieldPtrs<T, 1>& b) { return {b.in[0], b.out[0]}; }\n"
      << "    STRATA_HD Point load_point(const Fields& f, std::int64_t i) const { (void)f, (void)i; return "
         "{}; }\n\n"
      << "    // A plane's centre and the weighted sums of its patterns (for z-1:" << named(-1) << ", z:" << named(0)
      << ", z+1:" << named(1) << ").\n"
      << "    struct Sums {\n        R center";
    for (std::size_t p = 0; p < patterns.size(); ++p)
        if (!centre_only(int(p))) o << ", s" << p;
    o << ";\n    };\n"
      << "    // `u(di, dj)` reads one plane at an in-plane offset.\n"
      << "    template <class Nb2>\n    STRATA_HD Sums plane_sums(const Nb2& u) const {\n"
      << "        Sums s;\n        s.center = u(0, 0);\n";
    for (std::size_t p = 0; p < patterns.size(); ++p)
        if (!centre_only(int(p))) o << "        s.s" << p << " = " << sum_of(patterns[p]) << ";\n";
    o << "        return s;\n    }\n"
      << "    struct Partial {\n        R sum;\n    };\n"
      << "    STRATA_HD Partial partial(const Sums& below, const Sums& at) const {\n"
      << "        (void)below, (void)at;\n";
    const std::string b = part("below", -1), a = part("at", 0);
    o << "        return {" << (b.empty() && a.empty() ? std::string("R(0)") : b.empty() ? a : a.empty() ? b : b + " + " + a)
      << "};\n    }\n"
      << "    STRATA_HD R finish(const Sums& at, const Partial& p, const Sums& above) const {\n"
      << "        const R c = at.center, t = " << (member[2] < 0 ? std::string("p.sum") : "p.sum + " + part("above", 1))
      << ";\n        (void)c, (void)t, (void)above;\n";
    plane_model_rest(o, spec, u, kernel.pointwise(l.sum, "c", own));
}

// The rest of a leapfrog's functor: wave3d's interface (models/wave3d.hpp), the term that reads
// the neighbourhood in `laplacian` (one expression, the lets written out in it:
// Emitter::inline_lets), the rest of the field's update in `update`. The field's previous values
// are its other buffer: the update reads them at the cell and writes the new values over them. No
// sponge: `eta` is 0.
void wave_functor(std::ostream& o, const Spec& spec, const Layout& l, const Emitter& kernel) {
    const std::string &u = l.hoods[0]->name, &q = l.states[0]->name, &c = l.coefs[0]->name;
    o << "    struct Fields {\n        const T* in;    // " << u << " now\n        T* out;         // " << q << " ("
      << u << " a step before) on entry, " << u << " next on exit\n        const T* vdt2;  // " << c
      << "\n    };\n\n";
    params_and_constructor(o, spec);
    o << "    STRATA_HD static Fields bind(const FieldPtrs<T, 3>& b) { return {b.in[0], b.out[0], b.in[2]}; }\n\n"
      << "    // The term of " << u << "'s update that reads its neighbourhood, nb(di, dj, dk).\n"
      << "    template <class Nb>\n    STRATA_HD R laplacian(const Nb& nb) const {\n        (void)nb;\n"
      << "        return " << kernel.inline_lets()(*l.lap) << ";\n    }\n"
      << "    STRATA_HD R eta(int, int, int) const { return R(0); }\n"
      << "    // " << u << "'s new value from its own, " << q << ", " << c << " and the term (`lap`).\n"
      << "    STRATA_HD R update(R own, R prev, R coef, R lap, R eta) const {\n"
      << "        const R s_" << q << " = prev, k_" << c << " = coef;\n"
      << "        (void)own, (void)s_" << q << ", (void)k_" << c << ", (void)lap, (void)eta;\n"
      << "        return " << kernel.pointwise(l.lap, "own")(*l.next) << ";\n    }\n"
      << "    template <class Nb>\n"
      << "    STRATA_HD void store(const Nb& nb, const Fields& f, int i, int j, int k, std::int64_t c) const {\n"
      << "        f.out[c] = update(nb(0, 0, 0), f.out[c], f.vdt2[c], laplacian(nb), eta(i, j, k));\n    }\n";
}

}  // namespace

std::string generate_model(const Spec& spec, const std::string& symbol) {
    const Layout l = plan(spec);
    const Emitter kernel(spec, &l), initial(spec, nullptr);
    const std::string S = l.hoods[0]->name;
    const bool point = !l.states.empty();  // the 2D ladder's models: at most one
    const FieldDef* state = point ? l.states[0] : nullptr;
    const int nf = l.fields(), H = int(l.hoods.size()), D = spec.dims;
    std::ostringstream o;

    // (No path in it: the same file elsewhere is the same source, and the cache's same object.)
    o << "// Generated by strata from a stencil file: `strata show FILE` prints it.\n"
      << (l.cells    ? "// The model's kernel functor reads its neighbourhood cell by cell (cells_only, strata/model.hpp):\n"
                       "// the CPU backends and the CUDA strategies of cell_strategies (strategies.cuh) take it. The\n"
                       "// stencil file:\n//\n"
          : l.planes ? "// The model's kernel functor has heat3d's plane sums (models/heat3d.hpp), so every 3D strategy\n"
                       "// of the radius-1 ladder takes it. The stencil file:\n//\n"
          : l.sum    ? "// The model's kernel functor has heat3d's interface with plane sums of its own (the weighted\n"
                       "// sums its term needs of each plane), so every 3D strategy of the radius-1 ladder takes it.\n"
                       "// The stencil file:\n//\n"
          : l.lap    ? "// The model's kernel functor has wave3d's interface (models/wave3d.hpp), so every strategy of the\n"
                       "// radius-4 ladder takes it. The stencil file:\n//\n"
                     : "// The model's kernel functor has the interface of the built-in 2D models (models/heat2d.hpp,\n"
                       "// models/aliev_panfilov.hpp), so every 2D strategy takes it. The stencil file:\n//\n");
    std::istringstream text(spec.text);
    for (std::string line; std::getline(text, line);) o << "//   " << line << "\n";
    // Compiled in parts side by side (compile.cpp): the registration and the CPU engines
    // (STRATA_STENCIL_MAIN), the CUDA engines of each precision (STRATA_STENCIL_CUDA_F32, _F64, _F16,
    // _BF16).
    // NVRTC compiles the kernel functor and the initial state alone (stencil/rtc.cpp): the rest is
    // the host's.
    o << "\n#include \"stencil/kernel.hpp\"\n#include \"strata/core/plane_sums.hpp\"\n#ifndef __CUDACC_RTC__\n"
      << "#include \"assembly/register.hpp\"\n#include \"stencil/model.hpp\"\n"
      << "#if defined(STRATA_STENCIL_CUDA_F32) || defined(STRATA_STENCIL_CUDA_F64) || \\\n"
      << "    defined(STRATA_STENCIL_CUDA_F16) || defined(STRATA_STENCIL_CUDA_BF16)\n"
      << "#include \"cuda/engine.cuh\"\n#endif\n#endif\n\nnamespace strata::stencil::" << symbol << " {\n\n";

    // The kernel functor.
    o << "template <class T>\nstruct Kernel {\n"
      << "    using value_type = T;\n"
      << "    using R = compute_t<T>;  // the arithmetic: T, or fp32 for 16-bit storage\n"
      << "    static constexpr int dims = " << D << ";\n"
      << "    static constexpr int radius = " << l.radius << ";\n"
      << "    static constexpr int stencil_points = " << stencil_points(spec) << ";\n"
      << "    static constexpr bool mirror = " << (spec.boundary == Boundary::mirror ? "true" : "false") << ";\n"
      << "    static constexpr bool periodic = " << (spec.boundary == Boundary::periodic ? "true" : "false") << ";\n"
      << "    static constexpr bool star = " << (l.star ? "true" : "false") << ";\n"
      << "    static constexpr bool zero_ghosts = " << (spec.boundary == Boundary::zero ? "true" : "false") << ";\n"
      << "    static constexpr int flops_per_cell = " << spec.flops_per_cell() << ";\n"
      // (A leapfrog never writes its previous values: they are the field's other buffer.)
      << "    static constexpr int min_bytes_per_cell = " << spec.min_values_per_cell() - (l.lap ? 1 : 0)
      << " * int(sizeof(T));\n";
    if (H > 1)
        o << "    static constexpr int hoods = " << H << ";  // fields read through neighbourhoods: nb(h, di, dj"
          << (D == 3 ? ", dk" : "") << ")\n";
    if (l.cells) o << "    static constexpr bool cells_only = true;\n";
    if (spec.boundary == Boundary::fixed)
        o << "    static constexpr double ghost_value = " << number(spec.boundary_value) << ";  // boundary fixed\n";
    o << "\n";
    if (l.cells) {
        cells_functor(o, spec, l, kernel);
    } else if (l.planes) {
        planes_functor(o, spec, l, kernel);
    } else if (l.sum) {
        linear_functor(o, spec, l, kernel);
    } else if (l.lap) {
        wave_functor(o, spec, l, kernel);
    } else {
        if (H > 1) {
            o << "    struct Fields {\n        const T* in[" << H << "];  // ";
            for (int h = 0; h < H; ++h) o << (h ? ", " : "") << l.hoods[std::size_t(h)]->name;
            o << " now\n        T* out[" << H << "];       // and next\n";
            if (point) o << "        T* s;             // " << state->name << ", in place\n";
            o << "    };\n" << (point ? "    using Point = T;\n\n" : "    struct Point {};\n\n");
        } else if (point)
            o << "    struct Fields {\n        const T* in;  // " << S << " now\n        T* out;       // " << S
              << " next\n        T* s;         // " << state->name << ", in place\n    };\n    using Point = T;\n\n";
        else
            o << "    struct Fields {\n        const T* in;  // " << S << " now\n        T* out;       // " << S
              << " next\n    };\n    struct Point {};\n\n";
        params_and_constructor(o, spec);
        if (H > 1) {
            o << "    STRATA_HD static Fields bind(const FieldPtrs<T, " << nf << ">& b) {\n        Fields f;\n"
              << "        for (int h = 0; h < " << H << "; ++h) f.in[h] = b.in[h], f.out[h] = b.out[h];\n"
              << (point ? "        f.s = b.out[" + std::to_string(H) + "];\n" : "") << "        return f;\n    }\n";
        } else {
            o << "    STRATA_HD static Fields bind(const FieldPtrs<T, " << nf << ">& b) { return {b.in[0], b.out[0]"
              << (point ? ", b.out[1]" : "") << "}; }\n";
        }
        o << "    STRATA_HD Point load_point(const Fields& f, std::int64_t i) const { "
          << (point ? "return f.s[i]; }\n\n" : "(void)f, (void)i; return {}; }\n\n");

        // The updates and lets, in the file's order, into n_NAME and l_NAME.
        auto updates = [&](const char* indent) {
            std::string s;
            for (const Update& u : spec.updates)
                s += cat({indent, "const R ", u.local ? "l_" : "n_", u.field, " = ", kernel(*u.value), ";\n"});
            return s;
        };
        if (H > 1) {  // every field's new value at once (the temporal kernel keeps them in registers)
            o << "    template <class Nb, class S>\n"
              << "    STRATA_HD void update(const Nb& nb, T (&u)[" << H << "], S& s) const {\n"
              << "        (void)nb, (void)s;\n";
            if (point) o << "        const R s_" << state->name << " = s;\n        (void)s_" << state->name << ";\n";
            o << updates("        ");
            for (int h = 0; h < H; ++h) o << "        u[" << h << "] = n_" << l.hoods[std::size_t(h)]->name << ";\n";
            if (point) o << "        s = n_" << state->name << ";\n";
            o << "    }\n"
              << "    template <class Nb>\n"
              << "    STRATA_HD void store(const Nb& nb, Point s, const Fields& f, std::int64_t i) const {\n"
              << "        T u[" << H << "];\n        update(nb, u, s);\n";
            for (int h = 0; h < H; ++h) o << "        f.out[" << h << "][i] = u[" << h << "];\n";
            if (point) o << "        f.s[i] = s;\n";
            o << "    }\n"
              << "    template <int V>\n    struct alignas(sizeof(T) * V) Run {\n        T v[V];\n    };\n";
            if (point) o << "    STRATA_HD const Point* points(const Fields& f) const { return f.s; }\n";
        } else if (point) {
            o << "    template <class Nb>\n    STRATA_HD void update(const Nb& nb, T& out, T& s) const {\n"
              << "        (void)nb;\n        const R s_" << state->name << " = s;\n        (void)s_" << state->name << ";\n"
              << updates("        ") << "        out = n_" << S << ";\n        s = n_" << state->name << ";\n    }\n"
              << "    template <class Nb>\n"
              << "    STRATA_HD void store(const Nb& nb, Point s, const Fields& f, std::int64_t i) const {\n"
              << "        T out;\n        update(nb, out, s);\n        write(out, s, f, i);\n    }\n"
              << "    STRATA_HD void write(T out, Point s, const Fields& f, std::int64_t i) const {\n"
              << "        f.out[i] = out;\n        f.s[i] = s;\n    }\n"
              << "    template <int V>\n    struct alignas(sizeof(T) * V) Run {\n        T v[V];\n    };\n"
              << "    STRATA_HD const Point* points(const Fields& f) const { return f.s; }\n"
              << "    template <int V>\n"
              << "    STRATA_HD void write_run(const Run<V>& out, const Run<V>& s, const Fields& f, std::int64_t i) const {\n"
              << "        *reinterpret_cast<Run<V>*>(f.out + i) = out;\n"
              << "        *reinterpret_cast<Run<V>*>(f.s + i) = s;\n    }\n";
        } else {
            o << "    template <class Nb>\n    STRATA_HD T update(const Nb& nb) const {\n        (void)nb;\n"
              << updates("        ") << "        return n_" << S << ";\n    }\n"
              << "    template <class Nb>\n    STRATA_HD void update(const Nb& nb, T& out) const { out = update(nb); }\n"
              << "    template <class Nb>\n"
              << "    STRATA_HD void store(const Nb& nb, Point, const Fields& f, std::int64_t i) const { f.out[i] = update(nb); }\n"
              << "    STRATA_HD void write(T u, const Fields& f, std::int64_t i) const { f.out[i] = u; }\n"
              << "    template <int V>\n    struct alignas(sizeof(T) * V) Run {\n        T v[V];\n    };\n"
              << "    template <int V>\n    STRATA_HD void write_run(const Run<V>& u, const Fields& f, std::int64_t i) const {\n"
              << "        *reinterpret_cast<Run<V>*>(f.out + i) = u;\n    }\n";
        }
    }
    o << "};\n\n";

    o << "// The initial state: x, y, z in [0, 1], the cell's centre.\nstruct Initial {\n    double p[" << spec.params.size() + 1
      << "];\n    int nx, ny, nz;\n"
      << "    STRATA_HD double operator()(int f, int i, int j, int k) const {\n"
      << "        const double x = (i + 0.5) / nx, y = (j + 0.5) / ny, z = (k + 0.5) / nz;\n"
      << "        (void)x, (void)y, (void)z, (void)p;\n";
    for (const FieldDef& f : spec.fields)
        if (f.file.empty()) o << "        if (f == " << l.index(f.name) << ") return " << initial(*f.initial) << ";\n";
    o << "        return 0;\n    }\n};\n\n";

    // The Problem: fields, initial values, reductions, registration.
    o << "#ifndef __CUDACC_RTC__\n"
      << "inline std::shared_ptr<const Spec> g_spec;\ninline std::string g_name;\ninline ModelInfo g_info;\n\n"
      << "class Model final : public StencilProblem {\npublic:\n"
      << "    static constexpr FieldDecl fields[] = {";
    for (int h = 0; h < H; ++h) o << (h ? ", " : "") << "{\"" << l.hoods[std::size_t(h)]->name << "\", FieldRole::stencil, 0, 1}";
    for (const FieldDef* f : l.states)
        o << ", {\"" << f->name << "\", FieldRole::" << (l.lap ? "previous" : "state") << ", 0, 1}";
    for (const FieldDef* f : l.coefs) o << ", {\"" << f->name << "\", FieldRole::coefficient, 0, 1}";
    o << "};\n"
      << "    template <class T>\n    using Kernel = " << symbol << "::Kernel<T>;\n"
      << "    template <class T, class F>\n    decltype(auto) with_kernel(F&& f) const {\n"
      << "        return f(Kernel<T>(param_values().data()));\n    }\n"
      << "    // The coefficients' values: from their files, or their expressions (Initial).\n"
      << "    template <class T>\n    std::vector<std::pair<std::string, HostField<T>>> coefficients() const {\n"
      << "        std::vector<std::pair<std::string, HostField<T>>> out;\n";
    for (const FieldDef* f : l.coefs)
        o << "        out.emplace_back(\"" << f->name << "\", field_values<T>(\"" << f->name << "\", initial(), "
          << l.index(f->name) << "));\n";
    o << "        return out;\n    }\n"
      << "    // The initial values read from files (the engines set them over the initial state).\n"
      << "    template <class T>\n    std::vector<std::pair<std::string, HostField<T>>> initial_values() const {\n"
      << "        std::vector<std::pair<std::string, HostField<T>>> out;\n";
    for (const FieldDef& f : spec.fields)
        if (!f.coefficient && !f.file.empty())
            o << "        out.emplace_back(\"" << f.name << "\", field_values<T>(\"" << f.name << "\", initial(), "
              << l.index(f.name) << "));\n";
    o << "        return out;\n    }\n\n";
    o << "    using Initial = " << symbol << "::Initial;\n"
      << "    Initial initial() const {\n        Initial in{};\n"
      << "        for (std::size_t i = 0; i < param_values().size(); ++i) in.p[i] = param_values()[i];\n"
      << "        in.nx = extent().nx;\n        in.ny = extent().ny;\n        in.nz = extent().nz;\n        return in;\n    }\n\n";
    o << "    // max |f| and the root mean square of each field, in the file's order.\n"
      << "    using Observer = StencilObserver<" << nf - int(l.coefs.size()) << ">;\n"
      << "    Observer observer() const { return {{";
    bool first = true;
    for (const FieldDef& f : spec.fields) {
        if (f.coefficient) continue;
        o << (first ? "" : ", ") << l.index(f.name);
        first = false;
    }
    o << "}, this}; }\n\n"
      << "    using StencilProblem::StencilProblem;\n    using StencilProblem::describe;\n"
      << "    static ModelInfo describe() { return describe_stencil(*g_spec, g_name); }\n"
      << "    static std::unique_ptr<Problem> from_params(const Params& params, std::ostream&) {\n"
      << "        return std::make_unique<Model>(g_spec, &g_info, stencil_setup(*g_spec, g_info, params));\n    }\n"
      << "    static std::unique_ptr<Problem> box(const Params& params, int nx, int ny, int nz) {\n"
      << "        return std::make_unique<Model>(g_spec, &g_info, stencil_box(*g_spec, g_info, params, nx, ny, nz));\n"
      << "    }\n};\n#endif  // __CUDACC_RTC__\n\n}  // namespace strata::stencil::" << symbol << "\n\n";

    const std::pair<const char*, const char*> engines[] = {
        {"float", "F32"}, {"double", "F64"}, {"f16", "F16"}, {"bf16", "BF16"}};
    for (const auto& [t, part] : engines)
        o << "#ifdef STRATA_STENCIL_CUDA_" << part << "\nnamespace strata::cuda {\n"
          << "template std::unique_ptr<TypedEngine<" << t << ">> make_engine<stencil::" << symbol << "::Model, " << t
          << ">(const stencil::" << symbol << "::Model&, const EngineOptions&, const State<" << t << ">*);\n"
          << "template int engine_depth<stencil::" << symbol << "::Model, " << t << ">(const stencil::" << symbol
          << "::Model&, const EngineOptions&, std::int64_t);\n"
          << "}  // namespace strata::cuda\n#endif\n";
    o << "#ifdef STRATA_STENCIL_CUDA_F32\n"
      << "// The kernels every precision's engines launch (one list in the shared object), and where the\n"
      << "// loader hands over NVRTC's compile of them (load.cpp).\n"
      << "extern \"C\" __attribute__((visibility(\"default\"))) const std::vector<std::string>* " << kKernelNames
      << "() {\n    return &strata::cuda::kernel_names();\n}\n"
      << "extern \"C\" __attribute__((visibility(\"default\"))) void " << kKernelSetter
      << "(int images, const char* const* cubin, const std::size_t* bytes, const char* table) {\n"
      << "    strata::cuda::set_rtc_kernels(images, cubin, bytes, table);\n}\n#endif\n";
    // With CUDA the CPU engines storing 16 bits compile in a part of their own (compile.cpp): the
    // registration's part is told they are there (STRATA_STENCIL_CPU_HALF_APART).
    o << "\n#if defined(STRATA_STENCIL_CPU_HALF) || (defined(STRATA_STENCIL_MAIN) && "
         "defined(STRATA_STENCIL_CPU_HALF_APART))\nnamespace strata::cpu {\n";
    for (const char* t : {"f16", "bf16"})
        o << "#ifndef STRATA_STENCIL_CPU_HALF\nextern\n#endif\n"
          << "template std::unique_ptr<TypedEngine<" << t << ">> make_engine<stencil::" << symbol << "::Model, " << t
          << ">(const stencil::" << symbol << "::Model&, bool, const State<" << t
          << ">*, std::shared_ptr<Subdomain>);\n";
    o << "}  // namespace strata::cpu\n#endif\n";
    o << "\n#ifdef STRATA_STENCIL_MAIN\n";

    o << "// The registry's entry (load.cpp): the model under `name`, for the file as parsed.\n"
      << "extern \"C\" __attribute__((visibility(\"default\"))) const strata::ModelInfo* " << kEntryPoint
      << "(const strata::stencil::Spec* spec, const char* name) {\n"
      << "    namespace m = strata::stencil::" << symbol << ";\n"
      << "    m::g_spec = std::make_shared<const strata::stencil::Spec>(*spec);\n"
      << "    m::g_name = name;\n"
      << "    m::g_info = strata::registered_model<m::Model>();\n"
      << "    return &m::g_info;\n}\n#endif\n";
    return o.str();
}

}  // namespace strata::stencil
