// The stencil language's front end: the shipped examples parse into what they say, what the
// engines derive from them (radius, shape, flops, bytes), initial values, param overrides, and
// every error a user can make, each with its file, line, column and caret.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "stencil/codegen.hpp"
#include "strata/stencil.hpp"

namespace strata::stencil {
namespace {

const std::string kExamples = STRATA_SOURCE_DIR "/examples/stencils/";

TEST(Stencil, GrayScottParsesIntoItsFieldsParamsAndUpdates) {
    const Spec s = parse_file(kExamples + "gray-scott.stencil");
    EXPECT_EQ(s.dims, 2);
    ASSERT_EQ(s.fields.size(), 2u);
    EXPECT_EQ(s.fields[0].name, "u");
    EXPECT_EQ(s.fields[1].name, "v");
    EXPECT_EQ(s.params.size(), 5u);
    EXPECT_EQ(*s.param("F"), 0.035);
    EXPECT_EQ(s.boundary, Boundary::periodic);
    ASSERT_EQ(s.updates.size(), 2u);
    EXPECT_EQ(s.updates[1].field, "v");
    EXPECT_EQ(s.updates[1].at.line, 8);
    EXPECT_EQ(s.radius(), 1);
    EXPECT_TRUE(s.star());
    const auto reach = s.reach();
    EXPECT_EQ(reach.at("u").radius, 1);
    EXPECT_EQ(reach.at("v").radius, 1);
    // Each update: 9 binary operations and a lap (4 in 2D).
    EXPECT_EQ(s.flops_per_cell(), 28);
    EXPECT_EQ(s.min_values_per_cell(), 4);
}

TEST(Stencil, ExplicitOffsetsGiveRadiusAndShape) {
    const Spec s = parse_file(kExamples + "variable-wave.stencil");
    EXPECT_EQ(s.dims, 3);
    EXPECT_TRUE(s.field("c2dt2")->coefficient);
    EXPECT_EQ(s.field("c2dt2")->file, "");  // an expression here (file("...") in test_stencil_run.cpp)
    EXPECT_EQ(parse("dims 2\ncoefficient k = file(\"k.raw\")\nfield u = 0\nu' = k * u\n").field("k")->file, "k.raw");
    EXPECT_EQ(s.radius(), 2);
    EXPECT_TRUE(s.star());
    EXPECT_EQ(s.reach().at("q").radius, 0);
    EXPECT_EQ(s.min_values_per_cell(), 5);  // p and q read and written, c2dt2 read
    const Spec box = parse("dims 3\nfield u = 0\nu' = u[1,1,0] + u[0,0,-3]\n");
    EXPECT_FALSE(box.star());
    EXPECT_EQ(box.radius(), 3);
}

TEST(Stencil, InitialValuesAreFunctionsOfPositionAndParams) {
    const Spec s = parse_file(kExamples + "gray-scott.stencil");
    const double centre[3] = {0.5, 0.5, 0}, corner[3] = {0.1, 0.1, 0};
    EXPECT_EQ(evaluate(*s.fields[1].initial, s, centre), 0.25);
    EXPECT_EQ(evaluate(*s.fields[1].initial, s, corner), 0.0);
    EXPECT_EQ(evaluate(*s.fields[0].initial, s, corner), 1.0);
    const Spec p = parse("dims 2\nparam a = 2\nfield u = max(a * x, pow(y, 2)) - -1\nu' = u\n");
    const double at[3] = {0.25, 0.9, 0};
    EXPECT_DOUBLE_EQ(evaluate(*p.fields[0].initial, p, at), 0.81 + 1);
}

// A param's formula: numbers, the params above it and the grid's cells, resolved per grid in file
// order; an override makes it a number, and the formulas below it follow.
TEST(Stencil, ParamFormulasFollowTheGrid) {
    Spec s = parse("dims 2\nparam k = 3, h = 1 / (nx - 1)\nparam c = k * h * h + ny\nfield u = 0\nu' = c * u\n");
    EXPECT_TRUE(std::isnan(*s.param("h")));  // no grid yet
    const std::vector<double> a = resolve_params(s, 11, 5, 1), b = resolve_params(s, 21, 7, 1);
    EXPECT_EQ(a, (std::vector<double>{3, 1.0 / 10, 3 * (1.0 / 10) * (1.0 / 10) + 5}));
    EXPECT_EQ(b, (std::vector<double>{3, 1.0 / 20, 3 * (1.0 / 20) * (1.0 / 20) + 7}));
    override_params(s, "h=0.5");
    EXPECT_EQ(resolve_params(s, 11, 5, 1), (std::vector<double>{3, 0.5, 3 * 0.5 * 0.5 + 5}));
}

TEST(Stencil, ParamsAreOverriddenByName) {
    Spec s = parse_file(kExamples + "gray-scott.stencil");
    override_params(s, "F=0.04,k=0.06");
    EXPECT_EQ(*s.param("F"), 0.04);
    EXPECT_EQ(*s.param("k"), 0.06);
    EXPECT_EQ(*s.param("Du"), 0.16);
    try {
        override_params(s, "G=1");
        FAIL() << "an unknown param";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("has no param 'G' (it has Du, Dv, F, k, dt)"), std::string::npos) << e.what();
    }
    EXPECT_THROW(override_params(s, "F=abc"), UsageError);
    EXPECT_THROW(override_params(s, "F"), UsageError);
    EXPECT_THROW(override_params(s, "F=1e999"), UsageError);
}

// A later update reads an earlier one's new value where the cell is (apf's reaction after its
// diffusion): allowed; at an offset, or before that update: refused (the next test).
TEST(Stencil, NewValuesAreReadPointwiseAfterTheirUpdate) {
    const Spec s = parse("dims 2\nfield e = 0\nfield r = 0\ne' = e + lap(e)\nr' = r + e' * e\n");
    ASSERT_EQ(s.updates.size(), 2u);
    const Expr& sum = *s.updates[1].value;
    ASSERT_EQ(sum.kind, Expr::Kind::binary);
    EXPECT_TRUE(sum.args[1]->args[0]->updated);
}

// let: a value of the cell, read by name below it; its reads count for reach and flops, it is no
// field (no bytes).
TEST(Stencil, LetsAreValuesOfTheCellReadBelow) {
    const Spec s = parse("dims 2\nfield e = 0\nlet en = e[1,0] + e\ne' = en * en\n");
    ASSERT_EQ(s.updates.size(), 2u);
    EXPECT_TRUE(s.updates[0].local);
    EXPECT_EQ(s.local("en"), &s.updates[0]);
    EXPECT_EQ(s.updates[1].value->args[0]->kind, Expr::Kind::local);
    EXPECT_EQ(s.reach().at("e").radius, 1);
    EXPECT_EQ(s.flops_per_cell(), 2);
    EXPECT_EQ(s.min_values_per_cell(), 2);
}

TEST(Stencil, LapSumsAsTheBuiltinHeatOfItsDimension) {
    const ExprPtr e = expand_lap("u", 2, {});
    // ((u[-1,0] + u[1,0]) + (u[0,-1] + u[0,1])) - 4 * u[0,0]
    ASSERT_EQ(e->op, "-");
    const Expr& sum = *e->args[0];
    EXPECT_EQ(sum.args[0]->args[0]->offset, (std::vector<int>{-1, 0}));
    EXPECT_EQ(sum.args[0]->args[1]->offset, (std::vector<int>{1, 0}));
    EXPECT_EQ(sum.args[1]->args[0]->offset, (std::vector<int>{0, -1}));
    EXPECT_EQ(e->args[1]->args[0]->value, 4.0);
    EXPECT_EQ(e->args[1]->args[1]->offset, (std::vector<int>{0, 0}));
    // 3D: heat3d's chain, ((((u[-1,0,0] + u[1,0,0]) + u[0,-1,0]) + u[0,1,0]) + u[0,0,-1]) + u[0,0,1].
    const ExprPtr e3 = expand_lap("u", 3, {});
    const Expr* at = e3->args[0].get();
    for (const std::vector<int>& o :
         {std::vector<int>{0, 0, 1}, {0, 0, -1}, {0, 1, 0}, {0, -1, 0}, {1, 0, 0}}) {
        ASSERT_EQ(at->op, "+");
        EXPECT_EQ(at->args[1]->offset, o);
        at = at->args[0].get();
    }
    EXPECT_EQ(at->offset, (std::vector<int>{-1, 0, 0}));
    EXPECT_EQ(e3->args[1]->args[0]->value, 6.0);
}

struct BadCase {
    const char* text;
    const char* where;    // "LINE:COLUMN"
    const char* message;  // a piece of the message
};
class StencilErrors : public ::testing::TestWithParam<BadCase> {};
TEST_P(StencilErrors, NameTheFileLineAndColumnWithACaret) {
    const BadCase c = GetParam();
    try {
        parse(c.text, "my.stencil");
        FAIL() << "accepted: " << c.text;
    } catch (const UsageError& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.rfind(std::string("my.stencil:") + c.where + ": ", 0), 0u) << m;
        EXPECT_NE(m.find(c.message), std::string::npos) << m;
        // The line itself, then a caret under the column.
        const std::size_t nl = m.find('\n');
        ASSERT_NE(nl, std::string::npos) << m;
        const std::string rest = m.substr(nl + 1), caret = rest.substr(rest.find('\n') + 1);
        const int column = std::stoi(std::string(c.where).substr(std::string(c.where).find(':') + 1));
        EXPECT_EQ(caret, std::string(4 + column - 1, ' ') + "^") << m;
    }
}
INSTANTIATE_TEST_SUITE_P(
    EveryMistake, StencilErrors,
    ::testing::Values(
        BadCase{"dims 2\nfield u = 0\nu' = u + w\n", "3:10", "unknown name 'w' (fields: u)"},
        BadCase{"dims 2\nfield u = 0\nu' = foo(u)\n", "3:6", "unknown function 'foo'"},
        BadCase{"dims 2\nfield u = 0\nu' = u[1]\n", "3:8", "1 offset in a 2D stencil"},
        BadCase{"dims 3\nfield u = 0\nu' = u[1,0]\n", "3:8", "2 offsets in a 3D stencil"},
        BadCase{"dims 2\nfield u = 0\nu' = u[5,0]\n", "3:8", "offset 5 is beyond the largest radius, 4"},
        BadCase{"dims 2\nfield u = 0\nu' = u[0.5,0]\n", "3:8", "offsets are whole cells"},
        BadCase{"dims 2\nfield u = 0\nu' = u[0,-3e11]\n", "3:10", "offset -3e+11 is beyond the largest radius"},  // fuzz
        BadCase{"dims 2\nfield u = 0\nfield v = 1\nu' = v\n", "3:7", "field 'v' is never updated"},
        BadCase{"dims 2\nfield u = 0\nfield v = 0\nu' = u\nv' = u'[1,0]\n", "5:6", "read at an offset"},
        BadCase{"dims 2\nfield u = 0\nfield v = 0\nv' = u'\nu' = v\n", "4:6", "no line above updates 'u'"},
        BadCase{"dims 2\nfield u = 0\nu' = (u + 1\n", "3:12", "expected ')' to close the parenthesis"},
        BadCase{"dims 2\nfield u = 0\nu' = u +\n", "3:9", "expected a value, found the end of the line"},
        BadCase{"dims 2\nfield u = 0\nu' = u u\n", "3:8", "unexpected 'u' after the statement"},
        BadCase{"dims 2\nfield u = 0\nu' = u < 1 < 2\n", "3:12", "unexpected '<' after the statement"},
        BadCase{"dims 2\nfield u = 0\nu' = u $ 1\n", "3:8", "unexpected character '$'"},
        BadCase{"field u = 0\n", "1:1", "`dims 2` or `dims 3` must come first"},
        BadCase{"dims 4\n", "1:6", "dims must be 2 or 3"},
        BadCase{"dims 2\nfield u = 0\nu' = u\nu' = 2 * u\n", "4:1", "'u' is updated twice"},
        BadCase{"dims 2\nparam h = x / nx\nfield u = 0\nu' = h * u\n", "2:11", "'x' is a coordinate"},
        BadCase{"dims 2\nfield u = 0\nparam h = u\nu' = h * u\n", "3:11", "'u' is a field"},
        BadCase{"dims 2\nfield u = 0\nu' = nx * u\n", "3:6", "'nx' (the grid's cells) is for params' formulas"},
        BadCase{"dims 2\nparam h = nz\nfield u = 0\nu' = h * u\n", "2:11", "'nz' in a 2D stencil"},
        BadCase{"dims 2\nfield u = 0\nparam h = lap(u)\nu' = h * u\n", "3:11", "lap() in a param's formula"},
        BadCase{"dims 2\nparam h = g\nparam g = 1\nfield u = 0\nu' = h * u\n", "2:11", "unknown name 'g'"},
        BadCase{"dims 2\ncoefficient c = 1\nfield u = 0\nc' = u\nu' = c\n", "4:1", "'c' is a coefficient"},
        BadCase{"dims 2\nfield u = x + v\n", "2:15", "unknown name 'v'"},
        BadCase{"dims 2\nfield u = 0\nfield v = u\n", "3:11", "'u' is a field"},
        BadCase{"dims 2\nfield u = 0\nu' = z\n", "3:6", "'z' in a 2D stencil"},
        BadCase{"dims 2\nfield u = 0\nu' = min(u)\n", "3:6", "min() takes 2 arguments, not 1"},
        BadCase{"dims 2\nfield u = 0\nparam u = 1\nu' = u\n", "3:7", "'u' is already a name here"},
        BadCase{"dims 2\nfield u = 0\nboundary wrap\nu' = u\n", "3:10", "unknown boundary 'wrap'"},
        BadCase{"dims 2\nfield u = 0\nfield v = 0\nu' = lap(u[1,0])\n", "4:10", "lap() takes a field's name alone"},
        BadCase{"dims 2\nfield u = file(\"a.raw\nu' = u\n", "2:16", "a string without its closing quote"},
        BadCase{"dims 2\nfield u = 0\nfor u\n", "3:1", "unknown statement 'for'"},
        BadCase{"dims 2\nfield u = 0\n", "2:1", "no update"},
        BadCase{"dims 2\nfield u = 0\nlet w = u\n", "3:1", "no update"},
        BadCase{"dims 2\nfield u = 0\nu' = u + 1e400 * 0\n", "3:10", "a number beyond the largest double"},
        BadCase{"dims 2\nfield u = 0\nlet u = 1\nu' = u\n", "3:5", "'u' is already a name here"},
        BadCase{"dims 2\nfield u = 0\nu' = w\nlet w = u\n", "3:6", "unknown name 'w'"},
        BadCase{"dims 2\nfield u = 0\nlet w = u\nu' = w[1,0]\n", "4:7", "a let is a value at the cell"},
        BadCase{"dims 2\nlet w = 1\nfield u = w\nu' = u\n", "3:11", "'w' is a let"}));

// Which interface a 3D file's model gets (codegen.cpp): heat3d's interface with sums of the
// model's own where one term of the update reads the neighbourhood as a weighted sum (any order,
// star or box, weights of params); heat3d's plane sums where, failing that, the field's
// neighbours are read only as the sum of its faces, in heat3d's order (lap's) or pairwise axis by
// axis; cells otherwise.
TEST(Stencil, TheHeat3dSumGetsThePlaneSumsAndAnythingElseReadsCells) {
    const std::string sum = "u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,1]";
    auto kind = [](const std::string& text) {
        const std::string src = generate_model(parse("dims 3\nfield u = 0\nparam c = 0.1\n" + text + "\n"), "t");
        const bool planes = src.find("PlaneSums<R> plane_sums") != std::string::npos;
        const bool sums = src.find("STRATA_HD Sums plane_sums") != std::string::npos;
        const bool cells = src.find("cells_only = true") != std::string::npos;
        return planes + sums + cells != 1 ? std::string("?")
               : planes                   ? std::string("planes")
               : sums                     ? std::string("sums")
                                          : std::string("cells");
    };
    // One weighted sum (heat3d's faces among them, lap's): the model's own sums. The faces' sum
    // read more than once, where no one term is a weighted sum: heat3d's PlaneSums.
    EXPECT_EQ(kind("u' = u + c * (" + sum + " - 6 * u)"), "sums");
    EXPECT_EQ(kind("let s = " + sum + "\nu' = u + c * (s - 6 * u) * abs(u) + c * (" + sum + ")"), "planes");
    EXPECT_EQ(kind("u' = 2 * u"), "planes");  // no neighbour at all
    const std::string pairs = "((u[-1,0,0] + u[1,0,0]) + (u[0,-1,0] + u[0,1,0])) + (u[0,0,-1] + u[0,0,1])";
    EXPECT_EQ(kind("u' = u + c * lap(u)"), "sums");
    EXPECT_EQ(kind("u' = u + c * (" + pairs + " - 6 * u)"), "sums");
    EXPECT_EQ(kind("u' = u + c * (" + sum + " - 6 * u) + c * lap(u) * u"), "planes");
    EXPECT_EQ(kind("u' = u + c * (" + pairs + " - 6 * u) + c * (" + pairs + ") * u"), "planes");
    // Another order (the bits would differ), both orders in one file, brackets of neither, a lone
    // neighbour, a box neighbour, weights apart per offset, a term inside a function: a weighted
    // sum, the model's own sums.
    EXPECT_EQ(
        kind("u' = u + c * (u[1,0,0] + u[-1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,1] - 6 * u)"),
        "sums");
    EXPECT_EQ(kind("u' = u + c * (" + pairs + " - 6 * u) + c * lap(u)"), "sums");
    EXPECT_EQ(kind("u' = u + c * ((u[0,-1,0] + u[0,1,0]) + (u[-1,0,0] + u[1,0,0]) + (u[0,0,-1] + u[0,0,1]))"),
              "sums");
    EXPECT_EQ(kind("u' = u + c * (u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + (u[0,0,-1] + u[0,0,1]))"),
              "sums");
    EXPECT_EQ(kind("u' = u + c * (" + sum + ") + u[0,0,1]"), "sums");
    EXPECT_EQ(kind("u' = u + c * (" + sum + ") + u[1,1,0]"), "sums");
    EXPECT_EQ(kind("u' = u + c * (2 * u[1,0,0] - c * u[0,0,-1] / 3 - u[-1,1,1])"), "sums");
    EXPECT_EQ(kind("u' = u * exp(-c * u) + sqrt(abs(c * (lap(u) + u[1,1,1])))"), "sums");
    EXPECT_EQ(kind("u' = u + c * u * (u[1,0,0] + u[-1,0,0])"), "sums");  // (the term's weight outside it)
    // Not a weighted sum (a product of reads, a read inside a function, a weight of the cell's
    // value inside the term, a let that reads a neighbour), another boundary, a second field, a coefficient:
    // cells.
    EXPECT_EQ(kind("u' = u + c * u[1,0,0] * u[-1,0,0]"), "cells");
    EXPECT_EQ(kind("u' = u + c * (abs(u[1,0,0]) + u[-1,0,0])"), "cells");
    EXPECT_EQ(kind("u' = u + c * (u[1,0,0] * u + u[-1,0,0])"), "cells");
    EXPECT_EQ(kind("let s = u[1,0,0] - u\nu' = u + c * s"), "cells");
    EXPECT_EQ(kind("boundary periodic\nu' = u + c * (" + sum + " - 6 * u)"), "cells");
    EXPECT_EQ(kind("field v = 0\nu' = u + c * (" + sum + " - 6 * u)\nv' = v + u"), "cells");
    EXPECT_EQ(kind("coefficient k = 1\nu' = u + k * (" + sum + " - 6 * u)"), "cells");
    // The own sums: each plane's reads by weight, a symmetric box's z-1 and z+1 one pattern (s0),
    // the weights from the params once, 1 and -1 as additions, the term `t` where it stands, the
    // cell's own weighted value added to it after the planes'.
    const std::string box = generate_model(
        parse(
            "dims 3\nfield u = 0\nparam c = 0.1\nu' = u + c / 2 * (3 * (u[-1,0,0] + u[1,0,0] + u[0,-1,0] + "
            "u[0,1,0] + u[0,0,-1] + u[0,0,1]) + u[-1,-1,0] + u[1,-1,0] + u[-1,1,0] + u[1,1,0] + u[-1,0,-1] + "
            "u[1,0,-1] + u[-1,0,1] + u[1,0,1] + u[0,-1,-1] + u[0,1,-1] + u[0,-1,1] + u[0,1,1] - 30 * u)\n"),
        "t");
    for (const char* line :
         {"w0(R(3))", "R center, s0, s1;", "s.s0 = w0 * u(0, 0) + (u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1));",
          "s.s1 = w0 * (u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1)) + (u(-1, -1) + u(1, -1) + u(-1, 1) + u(1, "
          "1));",
          "return {below.s0 + at.s1};", "t = p.sum + above.s0;",
          "const R n_u = (c + (strata::divide(p_c, R(2)) * (t - (R(30) * c))));",
          "static constexpr bool star = false;"})
        EXPECT_NE(box.find(line), std::string::npos) << line << "\n" << box;
    const std::string star = generate_model(parse("dims 3\nfield u = 0\nparam a = 0.1, v = 0.2\nu' = u + a * "
                                                  "(u[1,0,0] - 2 * u + u[-1,0,0]) - v * (u - "
                                                  "u[0,0,-1])\n"),
                                            "t");
    for (const char* line :
         {"w0(R(1 + -2 * (p[0]) + -(p[1])))", "w1(R((p[0])))", "w2(R((p[1])))", "R center, s1;",
          "s.s1 = w1 * (u(1, 0) + u(-1, 0));", "return {w2 * below.center + at.s1};", "t = p.sum;",
          "const R n_u = (t + (w0 * c));", "static constexpr bool star = true;"})
        EXPECT_NE(star.find(line), std::string::npos) << line << "\n" << star;
    // The update as heat3d writes it, and lap: the faces regrouped into heat3d's additions (the
    // plane's four in-plane faces, then the centres below and above: the planes' own centres, no
    // sum of their own), the cell's own weight after.
    for (const std::string& update : {"u + c * (" + sum + " - 6 * u)", std::string("u + c * lap(u)")}) {
        const std::string heat =
            generate_model(parse("dims 3\nfield u = 0\nparam c = 0.1\nu' = " + update + "\n"), "t");
        for (const char* line : {"const R n_u = (c + (p_c * (t - (R(6) * c))));",
                                 "s.s1 = (u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1));", "R center, s1;",
                                 "return {below.center + at.s1};", "t = p.sum + above.center;",
                                 "static constexpr bool star = true;"})
            EXPECT_NE(heat.find(line), std::string::npos) << line << "\n" << heat;
        EXPECT_EQ(heat.find("nb("), std::string::npos) << heat;
    }
    // The faces' sum twice, pairwise: PlaneSums, the plane's pairs summed first, the plane below
    // kept until the one above.
    const std::string p = generate_model(parse("dims 3\nfield u = 0\nparam c = 0.1\nu' = u + c * (" + pairs +
                                               " - 6 * u) + c * (" + pairs + ") * u\n"),
                                         "t");
    EXPECT_NE(p.find("const R n_u = ((c + (p_c * (faces - (R(6) * c)))) + ((p_c * faces) * c));"),
              std::string::npos)
        << p;
    EXPECT_NE(p.find("s.edge = (u(-1, 0) + u(1, 0)) + (u(0, -1) + u(0, 1));"), std::string::npos) << p;
    EXPECT_NE(p.find("faces = p.faces + (p.edges + above.center);"), std::string::npos) << p;
    EXPECT_NE(p.find("partial_words = 2;"), std::string::npos) << p;
    EXPECT_EQ(p.find("nb("), std::string::npos) << p;
}

// A leapfrog (q' = p, p's update pointwise but for one term that alone reads the neighbourhood, a
// radius-4 star, one coefficient) gets wave3d's interface: the term is its `laplacian`, the rest
// its `update`, and q is p's other buffer. Anything else stays cells-only.
TEST(Stencil, TheLeapfrogGetsWave3dsInterfaceAndAnythingElseReadsCells) {
    const std::string head = "dims 3\nfield p = 0\nfield q = 0\ncoefficient k = 0.1\nparam a = 0.5\n";
    const std::string ring4 = "p[-4,0,0] + p[4,0,0] + p[0,-4,0] + p[0,4,0] + p[0,0,-4] + p[0,0,4]";
    const std::string ring1 = "p[-1,0,0] + p[1,0,0] + p[0,-1,0] + p[0,1,0] + p[0,0,-1] + p[0,0,1]";
    auto generated = [&](const std::string& text) { return generate_model(parse(head + text + "\n"), "t"); };
    auto kind = [&](const std::string& text) {
        const std::string src = generated(text);
        const bool wave = src.find("STRATA_HD R laplacian(") != std::string::npos;
        const bool cells = src.find("cells_only = true") != std::string::npos;
        return wave && !cells ? std::string("wave") : cells && !wave ? std::string("cells") : std::string("?");
    };
    EXPECT_EQ(kind("p' = 2 * p - q + k * (a * p + " + ring4 + ")\nq' = p"), "wave");
    EXPECT_EQ(kind("let r = " + ring1 + "\nlet s = r + " + ring4 + "\np' = 2 * p - q + k * (s - 12 * p)\nq' = p"), "wave");
    EXPECT_EQ(kind("p' = abs(q) * k + (" + ring4 + ")\nq' = p"), "wave");
    EXPECT_EQ(kind("p' = 2 * p + k * (" + ring4 + " - q)\nq' = p"), "wave");  // the term: the ring; q outside it
    // q not p a step before, a new value read, the coefficient or q inside the term, two terms
    // apart, a let that reads q, radius 3, a box, another boundary:
    EXPECT_EQ(kind("p' = 2 * p - q + k * (" + ring4 + ")\nq' = 2 * p"), "cells");
    EXPECT_EQ(kind("p' = 2 * p - q + k * (" + ring4 + ")\nq' = p'"), "cells");
    EXPECT_EQ(kind("q' = p\np' = 2 * p - q' + k * (" + ring4 + ")"), "cells");
    EXPECT_EQ(kind("p' = 2 * p - q + (k * p[4,0,0] + " + ring4 + ")\nq' = p"), "cells");
    EXPECT_EQ(kind("p' = 2 * p + k * (q * p[4,0,0] + " + ring4 + ")\nq' = p"), "cells");
    EXPECT_EQ(kind("p' = k * (" + ring4 + ") + a * (" + ring1 + ")\nq' = p"), "cells");
    EXPECT_EQ(kind("let r = q + " + ring1 + "\np' = 2 * p + k * (r + " + ring4 + ")\nq' = p"), "cells");
    EXPECT_EQ(kind("p' = 2 * p - q + k * (p[0,0,3] + p[0,0,-3])\nq' = p"), "cells");
    EXPECT_EQ(kind("p' = 2 * p - q + k * (" + ring4 + " + p[1,1,0])\nq' = p"), "cells");
    EXPECT_EQ(kind("boundary periodic\np' = 2 * p - q + k * (" + ring4 + ")\nq' = p"), "cells");
    // The split as written: the term in laplacian, the rest in update, q from p's other buffer.
    const std::string wave = generated("p' = 2 * p - q + k * (a * p + " + ring4 + ")\nq' = p");
    // (Each value read widened to the arithmetic's type R: fp32 for 16-bit storage, else T itself.)
    EXPECT_NE(wave.find("return (((((((p_a * R(nb(0, 0, 0))) + R(nb(-4, 0, 0))) + R(nb(4, 0, 0))) + "
                        "R(nb(0, -4, 0))) + R(nb(0, 4, 0))) + R(nb(0, 0, -4))) + R(nb(0, 0, 4)));"),
              std::string::npos)
        << wave;
    EXPECT_NE(wave.find("return (((R(2) * own) - s_q) + (k_k * lap));"), std::string::npos) << wave;
    EXPECT_NE(wave.find("{\"q\", FieldRole::previous"), std::string::npos) << wave;
    EXPECT_NE(wave.find("min_bytes_per_cell = 4 * int(sizeof(T))"), std::string::npos) << wave;
    // Lets written out where the term reads them, as a built-in writes one expression (codegen.cpp:
    // Emitter::inline_lets; the GPU's FMAs follow the order values are computed in).
    const std::string lets = generated("let r = " + ring1 + "\nlet s = r + " + ring4 + "\np' = 2 * p - q + k * (s - 12 * p)\nq' = p");
    EXPECT_EQ(lets.find("const R l_"), std::string::npos) << lets;
    EXPECT_NE(lets.find("nb(0, 0, -1))) + R(nb(0, 0, 1))) + R(nb(-4, 0, 0)))"), std::string::npos) << lets;
}

// No input exhausts the stack: nesting and length are bounded per statement.
TEST(Stencil, DeepNestingAndEndlessExpressionsAreRefused) {
    const std::string deep = "dims 2\nfield u = 0\nu' = " + std::string(300, '(') + "u" + std::string(300, ')') + "\n";
    EXPECT_THROW(parse(deep), UsageError);
    try {
        parse(deep);
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("nested more than 200 deep"), std::string::npos) << e.what();
    }
    std::string sum = "dims 2\nfield u = 0\nu' = u";
    for (int i = 0; i < 20000; ++i) sum += " + u";
    try {
        parse(sum + "\n");
        FAIL() << "a 40001-node expression";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("too long"), std::string::npos);
    }
    std::string fine = "dims 2\nfield u = 0\nu' = " + std::string(150, '(') + "u" + std::string(150, ')');
    for (int i = 0; i < 5000; ++i) fine += " + u";
    EXPECT_EQ(parse(fine + "\n").flops_per_cell(), 5000);
}

TEST(Stencil, AMissingFileIsAClearError) {
    EXPECT_THROW(parse_file("/nonexistent/my.stencil"), UsageError);
}

}  // namespace
}  // namespace strata::stencil
