// The stencil language's parser and checks (strata/stencil.hpp, docs/stencil-language.md). One
// statement per line; each line is tokenised and parsed by recursive descent; names are resolved
// as the statements come, so a line can only use what the lines above it declared.
#include "strata/stencil.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <sstream>

namespace strata::stencil {

namespace {

constexpr int kMaxRadius = 4;
// Bounds on a statement's tree, so that no input, however long or nested, exhausts the stack of
// the parser or of what walks the tree later.
constexpr int kMaxNesting = 200, kMaxNodes = 20000;
std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        if (!l.empty() && l.back() == '\r') l.pop_back();
        lines.push_back(l);
    }
    return lines;
}

UsageError located(const std::string& path, const std::vector<std::string>& lines, Where at,
                   const std::string& message) {
    std::string text = path + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " + message;
    if (at.line >= 1 && at.line <= int(lines.size())) {
        const std::string& l = lines[at.line - 1];
        text += "\n    " + l + "\n    " + std::string(std::size_t(std::max(at.column - 1, 0)), ' ') + "^";
    }
    return UsageError(text);
}

Expr make(Expr::Kind kind, Where at) {
    Expr e;
    e.kind = kind;
    e.at = at;
    return e;
}
const char* const kFunctions[] = {"abs", "sqrt", "exp", "log", "sin", "cos", "tanh", "min", "max", "pow", "lap"};
int arity(const std::string& f) { return f == "min" || f == "max" || f == "pow" ? 2 : 1; }

struct Token {
    enum class Kind { name, number, string, punct, end } kind;
    std::string text;
    double value = 0;
    int column = 0;  // 1-based
};

class Parser {
public:
    Parser(Spec& spec, std::vector<std::string> lines) : spec_(spec), lines_(std::move(lines)) {}

    void run() {
        for (line_ = 1; line_ <= int(lines_.size()); ++line_) {
            tokenize(lines_[line_ - 1]);
            nodes_ = 0;
            if (tokens_.front().kind == Token::Kind::end) continue;
            statement();
        }
        if (spec_.dims == 0) fail({1, 1}, "no `dims 2` or `dims 3` line");
        if (std::none_of(spec_.updates.begin(), spec_.updates.end(), [](const Update& u) { return !u.local; }))
            fail({int(lines_.size()), 1}, "no update (a line `NAME' = EXPRESSION`)");
        for (const FieldDef& f : spec_.fields) {
            const bool updated = std::any_of(spec_.updates.begin(), spec_.updates.end(),
                                             [&](const Update& u) { return u.field == f.name; });
            if (!f.coefficient && !updated)
                fail(f.at, "field '" + f.name + "' is never updated (add `" + f.name +
                               "' = ...`, or declare it `coefficient` if it only is read)");
        }
    }

private:
    [[noreturn]] void fail(Where at, const std::string& message) const {
        throw located(spec_.path, lines_, at, message);
    }
    Where here() const { return {line_, tokens_[pos_].column}; }
    const Token& peek() const { return tokens_[pos_]; }
    bool is(const char* punct) const { return peek().kind == Token::Kind::punct && peek().text == punct; }
    bool accept(const char* punct) {
        if (!is(punct)) return false;
        ++pos_;
        return true;
    }
    void expect(const char* punct, const std::string& what) {
        if (!accept(punct)) fail(here(), std::string("expected '") + punct + "' " + what + ", found " + describe(peek()));
    }
    static std::string describe(const Token& t) {
        switch (t.kind) {
            case Token::Kind::end: return "the end of the line";
            case Token::Kind::string: return "\"" + t.text + "\"";
            default: return "'" + t.text + "'";
        }
    }
    std::string name(const char* what) {
        if (peek().kind != Token::Kind::name) fail(here(), std::string("expected ") + what + ", found " + describe(peek()));
        return tokens_[pos_++].text;
    }
    double number(const char* what) {
        const bool minus = accept("-");
        if (peek().kind != Token::Kind::number) fail(here(), std::string("expected ") + what + ", found " + describe(peek()));
        const double v = tokens_[pos_++].value;
        return minus ? -v : v;
    }
    void end_of_line() {
        if (peek().kind != Token::Kind::end) fail(here(), "unexpected " + describe(peek()) + " after the statement");
    }

    void tokenize(const std::string& l) {
        tokens_.clear();
        pos_ = 0;
        std::size_t i = 0;
        while (i < l.size()) {
            const char c = l[i];
            const int column = int(i) + 1;
            if (c == '#') break;
            if (std::isspace(static_cast<unsigned char>(c))) {
                ++i;
            } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
                std::size_t j = i;
                while (j < l.size() && (std::isalnum(static_cast<unsigned char>(l[j])) || l[j] == '_')) ++j;
                tokens_.push_back({Token::Kind::name, l.substr(i, j - i), 0, column});
                i = j;
            } else if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < l.size() && std::isdigit(static_cast<unsigned char>(l[i + 1])))) {
                const char* begin = l.c_str() + i;
                char* stop = nullptr;
                const double v = std::strtod(begin, &stop);
                if (!std::isfinite(v)) fail({line_, column}, "a number beyond the largest double");
                tokens_.push_back({Token::Kind::number, std::string(begin, static_cast<const char*>(stop)), v, column});
                i += std::size_t(stop - begin);
            } else if (c == '"') {
                const std::size_t j = l.find('"', i + 1);
                if (j == std::string::npos) fail({line_, column}, "a string without its closing quote");
                tokens_.push_back({Token::Kind::string, l.substr(i + 1, j - i - 1), 0, column});
                i = j + 1;
            } else {
                static const char* const two[] = {"<=", ">=", "==", "!=", "&&", "||"};
                std::string p(1, c);
                for (const char* t : two)
                    if (l.compare(i, 2, t) == 0) p = t;
                if (p.size() == 1 && std::string("=,()[]'+-*/<>!").find(c) == std::string::npos)
                    fail({line_, column}, std::string("unexpected character '") + c + "'");
                tokens_.push_back({Token::Kind::punct, p, 0, column});
                i += p.size();
            }
        }
        tokens_.push_back({Token::Kind::end, "", 0, int(l.size()) + 1});
    }

    void statement() {
        const Where at = here();
        const std::string word = name("a statement (dims, field, coefficient, param, boundary, let or NAME' = ...)");
        if (is("'")) return update(word, at);
        if (word == "let") return let(at);
        if (word == "dims") {
            if (spec_.dims != 0) fail(at, "dims given twice");
            const Where n = here();
            const double d = number("2 or 3");
            if (d != 2 && d != 3) fail(n, "dims must be 2 or 3");
            spec_.dims = int(d);
        } else if (word == "field" || word == "coefficient") {
            need_dims(at);
            const Where w = here();
            FieldDef f{name("a field name"), w, word == "coefficient", nullptr, ""};
            if (taken(f.name)) fail(w, "'" + f.name + "' is already a name here");
            expect("=", "and its initial value");
            if (peek().kind == Token::Kind::name && peek().text == "file" && tokens_[pos_ + 1].text == "(") {
                pos_ += 2;
                if (peek().kind != Token::Kind::string) fail(here(), "expected a file name in quotes");
                f.file = tokens_[pos_++].text;
                expect(")", "after the file name");
            } else {
                f.initial = expression(Context::initial);
            }
            spec_.fields.push_back(std::move(f));
        } else if (word == "param") {
            do {
                const Where w = here();
                const std::string p = name("a parameter name");
                if (taken(p)) fail(w, "'" + p + "' is already a name here");
                expect("=", "and its value");
                ExprPtr value = expression(Context::param);
                const bool plain = value->kind == Expr::Kind::number;
                spec_.params.emplace_back(p, plain ? value->value : std::numeric_limits<double>::quiet_NaN());
                spec_.formulas.push_back(plain ? nullptr : std::move(value));
            } while (accept(","));
        } else if (word == "boundary") {
            const Where w = here();
            const std::string b = name("zero, fixed VALUE, periodic or mirror");
            if (b == "zero") spec_.boundary = Boundary::zero;
            else if (b == "periodic") spec_.boundary = Boundary::periodic;
            else if (b == "mirror") spec_.boundary = Boundary::mirror;
            else if (b == "fixed") spec_.boundary = Boundary::fixed, spec_.boundary_value = number("the fixed value");
            else fail(w, "unknown boundary '" + b + "' (zero, fixed VALUE, periodic or mirror)");
        } else {
            fail(at, "unknown statement '" + word + "' (dims, field, coefficient, param, boundary, let, or NAME' = ...)");
        }
        end_of_line();
    }

    void need_dims(Where at) const {
        if (spec_.dims == 0) fail(at, "`dims 2` or `dims 3` must come first");
    }
    static bool reserved(const std::string& n) {
        return n == "x" || n == "y" || n == "z" || n == "nx" || n == "ny" || n == "nz" || n == "file" || n == "let" ||
               std::find(std::begin(kFunctions), std::end(kFunctions), n) != std::end(kFunctions);
    }
    bool taken(const std::string& n) const {
        return spec_.field(n) || spec_.param(n) || spec_.local(n) || reserved(n);
    }

    // let NAME = EXPRESSION: read by the lines below at the cell, by name.
    void let(Where at) {
        need_dims(at);
        const Where w = here();
        const std::string n = name("the let's name");
        if (taken(n)) fail(w, "'" + n + "' is already a name here");
        expect("=", "and its value");
        ExprPtr value = expression(Context::update);
        end_of_line();
        spec_.updates.push_back({n, w, std::move(value), true});
    }

    void update(const std::string& field, Where at) {
        need_dims(at);
        ++pos_;  // the '
        const FieldDef* f = spec_.field(field);
        if (!f) fail(at, "unknown field '" + field + "'" + known_fields());
        if (f->coefficient) fail(at, "'" + field + "' is a coefficient: it is read, never updated");
        for (const Update& u : spec_.updates)
            if (u.field == field && !u.local)
                fail(at, "'" + field + "' is updated twice (line " + std::to_string(u.at.line) + " already did)");
        expect("=", "after " + field + "'");
        ExprPtr value = expression(Context::update);
        end_of_line();
        spec_.updates.push_back({field, at, std::move(value)});
    }

    std::string known_fields() const {
        std::string s;
        for (const FieldDef& f : spec_.fields) s += (s.empty() ? "" : ", ") + f.name;
        return s.empty() ? " (none declared above)" : " (fields: " + s + ")";
    }

    // Expressions. `param`: of numbers, the params above and the grid's nx, ny, nz; `initial`:
    // of position and params; `update`: fields too.
    enum class Context { param, initial, update };

    ExprPtr node(Expr e) {
        if (++nodes_ > kMaxNodes) fail(e.at, "the expression is too long (over " + std::to_string(kMaxNodes) + " terms)");
        return std::make_shared<const Expr>(std::move(e));
    }
    ExprPtr binary(const std::string& op, Where at, ExprPtr a, ExprPtr b) {
        Expr e = make(Expr::Kind::binary, at);
        e.op = op;
        e.args = {std::move(a), std::move(b)};
        return node(std::move(e));
    }
    ExprPtr expression(Context c) { return logical_or(c); }
    // The binary levels, loosest first; each is left-associative over the next one down, but
    // comparisons, which do not chain (a < b < c is an error: "unexpected '<'").
    ExprPtr logical_or(Context c) { return left(c, {"||"}, &Parser::logical_and); }
    ExprPtr logical_and(Context c) { return left(c, {"&&"}, &Parser::comparison); }
    ExprPtr comparison(Context c) { return left(c, {"<=", ">=", "==", "!=", "<", ">"}, &Parser::sum, false); }
    ExprPtr sum(Context c) { return left(c, {"+", "-"}, &Parser::product); }
    ExprPtr product(Context c) { return left(c, {"*", "/"}, &Parser::unary); }
    ExprPtr left(Context c, std::initializer_list<const char*> ops, ExprPtr (Parser::*next)(Context), bool chain = true) {
        ExprPtr a = (this->*next)(c);
        for (bool more = true; more;) {
            more = false;
            for (const char* op : ops)
                if (is(op)) {
                    const Where at = here();
                    ++pos_;
                    a = binary(op, at, a, (this->*next)(c));
                    more = chain;
                    break;
                }
        }
        return a;
    }
    ExprPtr unary(Context c) {
        const Where at = here();
        struct Deeper {  // every nesting (parentheses, calls, signs) passes through here
            int& depth;
            explicit Deeper(int& d) : depth(d) { ++depth; }
            ~Deeper() { --depth; }
        } deeper(depth_);
        if (depth_ > kMaxNesting) fail(at, "nested more than " + std::to_string(kMaxNesting) + " deep");
        if (accept("+")) return unary(c);
        if (is("-") || is("!")) {
            Expr e = make(Expr::Kind::unary, at);
            e.op = tokens_[pos_++].text;
            e.args = {unary(c)};
            return node(std::move(e));
        }
        return primary(c);
    }
    ExprPtr primary(Context c) {
        const Where at = here();
        const Token& t = peek();
        if (t.kind == Token::Kind::number) {
            Expr e = make(Expr::Kind::number, at);
            e.value = tokens_[pos_++].value;
            return node(std::move(e));
        }
        if (accept("(")) {
            ExprPtr e = expression(c);
            expect(")", "to close the parenthesis");
            return e;
        }
        if (t.kind != Token::Kind::name) fail(at, "expected a value, found " + describe(t));
        const std::string n = tokens_[pos_++].text;
        if (is("(")) return call(n, at, c);
        if (n == "nx" || n == "ny" || n == "nz") {
            if (c != Context::param) fail(at, "'" + n + "' (the grid's cells) is for params' formulas: give it a param");
            if (n == "nz" && spec_.dims == 2) fail(at, "'nz' in a 2D stencil");
            Expr e = make(Expr::Kind::grid, at);
            e.name = n;
            return node(std::move(e));
        }
        if (n == "x" || n == "y" || n == "z") {
            if (c == Context::param)
                fail(at, "a param's formula depends on numbers, params and nx, ny, nz alone; '" + n + "' is a coordinate");
            if (n == "z" && spec_.dims == 2) fail(at, "'z' in a 2D stencil");
            Expr e = make(Expr::Kind::coordinate, at);
            e.name = n;
            return node(std::move(e));
        }
        if (spec_.param(n)) {
            Expr e = make(Expr::Kind::param, at);
            e.name = n;
            return node(std::move(e));
        }
        if (c == Context::param && (spec_.local(n) || spec_.field(n)))
            fail(at, "a param's formula depends on numbers, params and nx, ny, nz alone; '" + n + "' is a " +
                         (spec_.field(n) ? "field" : "let"));
        if (spec_.local(n)) {
            if (c == Context::initial) fail(at, "initial values depend on x, y, z and params alone; '" + n + "' is a let");
            if (is("[") || is("'")) fail(here(), "a let is a value at the cell: no offset, no '");
            Expr e = make(Expr::Kind::local, at);
            e.name = n;
            return node(std::move(e));
        }
        const FieldDef* f = spec_.field(n);
        if (!f) fail(at, "unknown name '" + n + "'" + (c == Context::update ? known_fields() : std::string()));
        if (c == Context::initial)
            fail(at, "initial values depend on x, y, z and params alone; '" + n + "' is a field");
        return field_read(*f, at);
    }
    ExprPtr field_read(const FieldDef& f, Where at) {
        Expr e = make(Expr::Kind::field, at);
        e.name = f.name;
        e.offset.assign(std::size_t(spec_.dims), 0);
        if (accept("'")) {
            e.updated = true;
            const bool done = std::any_of(spec_.updates.begin(), spec_.updates.end(),
                                          [&](const Update& u) { return u.field == f.name && !u.local; });
            if (!done)
                fail(at, "'" + f.name + "'' is this step's new value, and no line above updates '" + f.name +
                             "' (updates run in file order)");
        }
        if (accept("[")) {
            const Where open = here();
            std::vector<int> o;
            do {
                const Where w = here();
                const double v = number("an integer offset");
                if (v != std::floor(v)) fail(w, "offsets are whole cells");
                if (std::fabs(v) > kMaxRadius) {
                    std::ostringstream text;  // the value as written: it may not fit an int
                    text << "offset " << v << " is beyond the largest radius, " << kMaxRadius;
                    fail(w, text.str());
                }
                o.push_back(int(v));
            } while (accept(","));
            expect("]", "to close the offset");
            if (int(o.size()) != spec_.dims)
                fail(open, std::to_string(o.size()) + " offset" + (o.size() == 1 ? "" : "s") + " in a " +
                               std::to_string(spec_.dims) + "D stencil (one per axis: x, y" + (spec_.dims == 3 ? ", z" : "") + ")");
            if (e.updated && std::any_of(o.begin(), o.end(), [](int v) { return v != 0; }))
                fail(at, "'" + f.name + "'' read at an offset: a step's new values are known only where the cell is");
            e.offset = std::move(o);
        }
        return node(std::move(e));
    }
    ExprPtr call(const std::string& n, Where at, Context c) {
        if (std::find(std::begin(kFunctions), std::end(kFunctions), n) == std::end(kFunctions))
            fail(at, "unknown function '" + n + "' (abs, sqrt, exp, log, sin, cos, tanh, min, max, pow, lap)");
        ++pos_;  // (
        Expr e = make(Expr::Kind::call, at);
        e.name = n;
        if (n == "lap") {
            if (c != Context::update) fail(at, c == Context::param ? "lap() in a param's formula" : "lap() in an initial value");
            const Where w = here();
            const std::string f = name("a field name");
            const FieldDef* def = spec_.field(f);
            if (!def) fail(w, "unknown field '" + f + "'" + known_fields());
            e.args = {field_read(*def, w)};
            if (e.args[0]->updated || std::any_of(e.args[0]->offset.begin(), e.args[0]->offset.end(), [](int v) { return v; }))
                fail(w, "lap() takes a field's name alone");
        } else {
            do e.args.push_back(expression(c));
            while (accept(","));
        }
        expect(")", "to close the call");
        if (int(e.args.size()) != arity(n))
            fail(at, n + "() takes " + std::to_string(arity(n)) + " argument" + (arity(n) == 1 ? "" : "s") + ", not " +
                         std::to_string(e.args.size()));
        return node(std::move(e));
    }

    Spec& spec_;
    std::vector<std::string> lines_;
    std::vector<Token> tokens_;
    std::size_t pos_ = 0;
    int line_ = 0, nodes_ = 0, depth_ = 0;
};

void visit(const Expr& e, const std::function<void(const Expr&)>& f) {
    f(e);
    for (const ExprPtr& a : e.args) visit(*a, f);
}

}  // namespace

const FieldDef* Spec::field(const std::string& name) const {
    for (const FieldDef& f : fields)
        if (f.name == name) return &f;
    return nullptr;
}

const Update* Spec::local(const std::string& name) const {
    for (const Update& u : updates)
        if (u.local && u.field == name) return &u;
    return nullptr;
}

std::optional<double> Spec::param(const std::string& name) const {
    for (const auto& [n, v] : params)
        if (n == name) return v;
    return std::nullopt;
}

std::map<std::string, Reach> Spec::reach() const {
    std::map<std::string, Reach> out;
    for (const FieldDef& f : fields) out[f.name];
    for (const Update& u : updates)
        visit(*u.value, [&](const Expr& e) {
            if (e.kind == Expr::Kind::call && e.name == "lap") {
                Reach& r = out[e.args[0]->name];
                r.radius = std::max(r.radius, 1);
            } else if (e.kind == Expr::Kind::field) {
                Reach& r = out[e.name];
                r.read = true;
                int nonzero = 0;
                for (int v : e.offset) {
                    r.radius = std::max(r.radius, std::abs(v));
                    nonzero += v != 0;
                }
                if (nonzero > 1) r.star = false;
            }
        });
    return out;
}

int Spec::radius() const {
    int r = 0;
    for (const auto& [name, reach] : reach()) r = std::max(r, reach.radius);
    return r;
}

bool Spec::star() const {
    for (const auto& [name, reach] : reach())
        if (!reach.star) return false;
    return true;
}

int Spec::flops_per_cell() const {
    int n = 0;
    for (const Update& u : updates)
        visit(*u.value, [&](const Expr& e) {
            if (e.kind == Expr::Kind::binary || (e.kind == Expr::Kind::unary && e.op == "-")) ++n;
            if (e.kind == Expr::Kind::call) n += e.name == "lap" ? 2 * dims + 1 : 1;  // its adds, the 2d*, the -
        });
    return n;
}

int Spec::min_values_per_cell() const {
    int n = 0;
    for (const FieldDef& f : fields) n += f.coefficient ? 1 : 2;
    return n;
}

Spec parse(const std::string& text, const std::string& path) {
    Spec spec;
    spec.path = path;
    spec.text = text;
    Parser(spec, split_lines(text)).run();
    return spec;
}

UsageError error_at(const Spec& spec, Where at, const std::string& message) {
    return located(spec.path, split_lines(spec.text), at, message);
}

Spec parse_file(const std::string& path) {
    if (std::filesystem::is_directory(path))
        throw UsageError("'" + path + "' is a folder: name a .stencil file (examples/stencils/ has some)");
    std::ifstream f(path, std::ios::binary);
    if (!f) throw UsageError("cannot open the stencil file '" + path + "'");
    std::ostringstream text;
    text << f.rdbuf();
    return parse(text.str(), path);
}

void override_params(Spec& spec, const std::string& assignments) {
    std::istringstream in(assignments);
    for (std::string item; std::getline(in, item, ',');) {
        const std::size_t eq = item.find('=');
        const std::string name = eq == std::string::npos ? item : item.substr(0, eq);
        auto it = std::find_if(spec.params.begin(), spec.params.end(), [&](const auto& p) { return p.first == name; });
        if (it == spec.params.end()) {
            std::string known;
            for (const auto& p : spec.params) known += (known.empty() ? "" : ", ") + p.first;
            throw UsageError("--params: " + spec.path + " has no param '" + name + "'" +
                             (known.empty() ? " (it has none)" : " (it has " + known + ")"));
        }
        const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
        char* stop = nullptr;
        const double v = value.empty() ? 0.0 : std::strtod(value.c_str(), &stop);
        if (value.empty() || *stop != '\0' || !std::isfinite(v))
            throw UsageError("--params: '" + item + "' is not NAME=NUMBER");
        it->second = v;
        spec.formulas[std::size_t(it - spec.params.begin())] = nullptr;
    }
}

std::vector<double> resolve_params(const Spec& spec, int nx, int ny, int nz) {
    Spec s = spec;  // each formula reads the values above it, resolved
    const int grid[3] = {nx, ny, nz};
    const double origin[3] = {0, 0, 0};
    std::vector<double> out;
    for (std::size_t i = 0; i < s.params.size(); ++i) {
        if (s.formulas[i]) s.params[i].second = evaluate(*s.formulas[i], s, origin, grid);
        out.push_back(s.params[i].second);
    }
    return out;
}

double evaluate(const Expr& e, const Spec& spec, const double (&xyz)[3], const int* grid) {
    auto arg = [&](int i) { return evaluate(*e.args[std::size_t(i)], spec, xyz, grid); };
    switch (e.kind) {
        case Expr::Kind::number: return e.value;
        case Expr::Kind::grid:
            if (!grid) throw Error("'" + e.name + "' outside a param's formula");
            return grid[e.name[1] - 'x'];
        case Expr::Kind::param: return *spec.param(e.name);
        case Expr::Kind::coordinate: return xyz[e.name[0] - 'x'];
        case Expr::Kind::unary: return e.op == "-" ? -arg(0) : double(arg(0) == 0);
        case Expr::Kind::binary: {
            const double a = arg(0), b = arg(1);
            const std::string& op = e.op;
            if (op == "+") return a + b;
            if (op == "-") return a - b;
            if (op == "*") return a * b;
            if (op == "/") return a / b;
            if (op == "<") return a < b;
            if (op == "<=") return a <= b;
            if (op == ">") return a > b;
            if (op == ">=") return a >= b;
            if (op == "==") return a == b;
            if (op == "!=") return a != b;
            if (op == "&&") return a != 0 && b != 0;
            return a != 0 || b != 0;  // ||
        }
        case Expr::Kind::call: {
            const std::string& f = e.name;
            if (f == "min") return std::min(arg(0), arg(1));
            if (f == "max") return std::max(arg(0), arg(1));
            if (f == "pow") return std::pow(arg(0), arg(1));
            const double a = arg(0);
            if (f == "abs") return std::fabs(a);
            if (f == "sqrt") return std::sqrt(a);
            if (f == "exp") return std::exp(a);
            if (f == "log") return std::log(a);
            if (f == "sin") return std::sin(a);
            if (f == "cos") return std::cos(a);
            return std::tanh(a);  // the parser admits no other name here (lap is refused in initial values)
        }
        case Expr::Kind::field:
        case Expr::Kind::local: break;
    }
    throw UsageError(spec.path + ":" + std::to_string(e.at.line) + ":" + std::to_string(e.at.column) +
                     ": a field in a value computed from position alone");
}

ExprPtr expand_lap(const std::string& field, int dims, Where at) {
    auto read = [&](int axis, int d) {
        Expr e = make(Expr::Kind::field, at);
        e.name = field;
        e.offset.assign(std::size_t(dims), 0);
        if (axis >= 0) e.offset[std::size_t(axis)] = d;
        return std::make_shared<const Expr>(std::move(e));
    };
    auto bin = [&](const char* op, ExprPtr a, ExprPtr b) {
        Expr e = make(Expr::Kind::binary, at);
        e.op = op;
        e.args = {std::move(a), std::move(b)};
        return std::make_shared<const Expr>(std::move(e));
    };
    ExprPtr sum = bin("+", read(0, -1), read(0, 1));
    if (dims == 2)
        sum = bin("+", sum, bin("+", read(1, -1), read(1, 1)));
    else
        for (int axis = 1; axis < dims; ++axis) sum = bin("+", bin("+", sum, read(axis, -1)), read(axis, 1));
    Expr k = make(Expr::Kind::number, at);
    k.value = 2.0 * dims;
    return bin("-", sum, bin("*", std::make_shared<const Expr>(std::move(k)), read(-1, 0)));
}

}  // namespace strata::stencil
