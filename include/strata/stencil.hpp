#pragma once
// The stencil language's front end (docs/stencil-language.md): a `.stencil` file parsed into an
// expression tree and checked, with what the engines need to know derived from it (each field's
// radius and shape, flops and minimum bytes per cell). The first layer of user stencils: code
// generation into the model functor and its compilation (NVRTC, the host compiler) build on it.
//
// Errors are UsageErrors that name the file, line and column and show the line with a caret.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/core/error.hpp"

namespace strata::stencil {

// Where a piece of the source is: 1-based line and column.
struct Where {
    int line = 0, column = 0;
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

// A node of an expression. Kinds and what they use:
//   number     value
//   param      name (a `param`)
//   coordinate name ("x", "y" or "z": the cell's centre in [0, 1] along that axis)
//   field      name, offset (one entry per dimension), updated (NAME' : the value after this
//              step's update of NAME, read where the cell is)
//   unary      op ("-" or "!"), args[0]
//   binary     op (+ - * / < <= > >= == != && ||), args[0], args[1]
//   call       name (abs sqrt exp log sin cos tanh min max pow lap), args
//   local      name (a `let` above: its value at the cell)
struct Expr {
    // grid: the grid's cells along an axis (nx, ny, nz), in a param's formula only.
    enum class Kind { number, param, coordinate, field, unary, binary, call, local, grid } kind = Kind::number;
    Where at;
    double value = 0;
    std::string name, op;
    std::vector<int> offset;
    bool updated = false;
    std::vector<ExprPtr> args;
};

enum class Boundary { zero, fixed, periodic, mirror };

struct FieldDef {
    std::string name;
    Where at;
    bool coefficient = false;  // read only: `coefficient NAME = ...`
    ExprPtr initial;           // the initial value (a constant or an expression of x, y, z, params)
    std::string file;          // or `file("PATH")`: raw values, x fastest (coefficients and fields)
};

// `NAME' = EXPRESSION` (a field's new value), or `let NAME = EXPRESSION` (local: a value of the
// cell that the lines below read by NAME, computed once, in file order with the updates).
struct Update {
    std::string field;  // the field, or the let's name
    Where at;
    ExprPtr value;
    bool local = false;
};

// Per field, what its reads need: the widest offset along any axis (lap counts 1) and whether
// every offset lies on an axis (a star) or some on a diagonal (a box).
struct Reach {
    int radius = 0;
    bool star = true;
    bool read = false;  // read at all
};

struct Spec {
    std::string path;  // for messages
    std::string text;  // the file's text: for messages, and what a generated model is keyed by
    int dims = 0;
    std::vector<FieldDef> fields;  // in declaration order
    std::vector<std::pair<std::string, double>> params;
    // params[i]'s formula where it has one (of numbers, the params above it and the grid's nx, ny,
    // nz: a step that follows from the mesh), else null; its value in `params` is then NaN until
    // resolve_params gives it a grid.
    std::vector<ExprPtr> formulas;
    Boundary boundary = Boundary::zero;
    double boundary_value = 0;     // Boundary::fixed's
    std::vector<Update> updates;   // and lets, in file order: a later line may read an earlier one's
                                   // NAME' or let

    const FieldDef* field(const std::string& name) const;
    const Update* local(const std::string& name) const;  // a let
    std::optional<double> param(const std::string& name) const;
    // Reach of every field over all updates (fields never read have read == false).
    std::map<std::string, Reach> reach() const;
    int radius() const;   // the widest of any field
    bool star() const;    // every field's reads are a star
    // Floating-point operations per cell update, counted on the trees: + - * / and comparisons 1,
    // lap 2 * dims + 1 (its additions, the centre's multiply and the difference), other calls 1.
    int flops_per_cell() const;
    // Values moved per cell update at the least: each updated field read and written once, each
    // coefficient read once (times the precision's bytes).
    int min_values_per_cell() const;
};

// The UsageError for a mistake at `at`: "FILE:LINE:COL: message", the line and a caret under the
// column (what the parser throws, for the checks that come after it: code generation's).
UsageError error_at(const Spec& spec, Where at, const std::string& message);

// Parses and checks `text` (named `path` in messages).
Spec parse(const std::string& text, const std::string& path = "<stencil>");
Spec parse_file(const std::string& path);

// `--params F=0.04,k=0.06`: each NAME=VALUE replaces a param's value (a formula's too: the
// params below it that read it follow); an unknown name or a malformed pair is a UsageError naming
// it and the params there are.
void override_params(Spec& spec, const std::string& assignments);
// The params' values on a grid of nx x ny x nz cells: numbers as they are, formulas in file order.
std::vector<double> resolve_params(const Spec& spec, int nx, int ny, int nz);

// The value of `e` at a point: coordinates by name ("x", "y", "z"), the spec's params. For the
// initial values; a field read in `e` is an error (initial values depend on position alone).
// `grid`: nx, ny, nz for a param's formula (null elsewhere, where none can appear).
double evaluate(const Expr& e, const Spec& spec, const double (&xyz)[3], const int* grid = nullptr);

// lap(NAME) spelled out in the order generated code sums it, the built-in heat model's of its
// dimension, so that `u + c * lap(u)` has its bits: in 2D heat2d's pairs, (u[-1,0] + u[1,0]) +
// (u[0,-1] + u[0,1]); in 3D heat3d's chain, u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] +
// u[0,0,-1] + u[0,0,1] added left to right (whose plane sums every 3D strategy takes, codegen.cpp).
// Then minus 2 * dims times the centre.
ExprPtr expand_lap(const std::string& field, int dims, Where at);

}  // namespace strata::stencil
