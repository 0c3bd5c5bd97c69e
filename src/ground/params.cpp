#include "strata/params.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "strata/core/error.hpp"

namespace strata {

const Params::Value* Params::find(const std::string& key) const {
    const auto it = values_.find(key);
    return it == values_.end() ? nullptr : &it->second;
}

ParamReader::ParamReader(const std::vector<ParamSpec>& specs, const Params& params, std::string_view model)
    : specs_(specs), params_(params) {
    for (const auto& [key, value] : params.values()) {
        bool known = false;
        for (const ParamSpec& s : specs) known = known || s.key == key;
        if (known) continue;
        std::string keys;
        for (const ParamSpec& s : specs) keys += (keys.empty() ? "" : ", ") + s.key;
        throw UsageError(std::string(model) + " has no parameter '" + key + "' (it has " + keys + ")");
    }
}

const ParamSpec& ParamReader::spec(const std::string& key) const {
    for (const ParamSpec& s : specs_)
        if (s.key == key) return s;
    throw Error("the model reads an undeclared parameter '" + key + "'");
}

namespace {

// The value as text, as a command line would give it: the form the converters below parse.
std::string as_text(const Params::Value& v) {
    if (const auto* s = std::get_if<std::string>(&v)) return *s;
    if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
    if (const auto* d = std::get_if<double>(&v)) {
        std::ostringstream o;
        o.precision(17);
        o << *d;
        return o.str();
    }
    if (const auto* b = std::get_if<bool>(&v)) return *b ? "1" : "0";
    return "";
}

[[noreturn]] void bad(const ParamSpec& s, const std::string& text, const char* what) {
    throw UsageError(s.flag + ": '" + text + "' is not " + what);
}

template <class N>
N checked(const ParamSpec& s, N v) {
    if (s.positive && !(v > 0)) throw UsageError(s.flag + " must be positive (got " + std::to_string(v) + ")");
    if (s.non_negative && !(v >= 0)) throw UsageError(s.flag + " must be >= 0 (got " + std::to_string(v) + ")");
    return v;
}

}  // namespace

std::int64_t ParamReader::integer(const std::string& key) const {
    const ParamSpec& s = spec(key);
    const Params::Value* v = params_.find(key);
    if (v)
        if (const auto* i = std::get_if<std::int64_t>(v)) return checked(s, *i);
    const std::string text = v ? as_text(*v) : s.fallback;
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE) bad(s, text, "a whole number");
    return checked(s, std::int64_t(n));
}

double ParamReader::real(const std::string& key) const {
    const ParamSpec& s = spec(key);
    const Params::Value* v = params_.find(key);
    if (v)
        if (const auto* d = std::get_if<double>(v)) return checked(s, *d);
    const std::string text = v ? as_text(*v) : s.fallback;
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(d)) bad(s, text, "a number");
    return checked(s, d);
}

std::string ParamReader::text(const std::string& key) const {
    const Params::Value* v = params_.find(key);
    return v ? as_text(*v) : spec(key).fallback;
}

std::vector<std::string> ParamReader::texts(const std::string& key) const {
    const ParamSpec& s = spec(key);
    const Params::Value* v = params_.find(key);
    if (!v) return s.fallback.empty() ? std::vector<std::string>{} : std::vector<std::string>{s.fallback};
    if (const auto* t = std::get_if<std::vector<std::string>>(v)) return *t;
    return {as_text(*v)};
}

std::vector<double> ParamReader::reals(const std::string& key) const {
    const ParamSpec& s = spec(key);
    const Params::Value* v = params_.find(key);
    if (!v) return {};
    if (const auto* r = std::get_if<std::vector<double>>(v)) {
        if (int(r->size()) != s.count) throw UsageError(s.flag + " needs " + std::to_string(s.count) + " numbers");
        return *r;
    }
    throw UsageError(s.flag + " needs " + std::to_string(s.count) + " numbers");
}

int ParamReader::side(const std::string& key, std::int64_t n) const {
    if (!given(key)) return int(n);
    const std::int64_t s = integer(key);
    if (s > 1 << 20) throw UsageError("--" + key + " " + std::to_string(s) + " is too large");
    return int(s);
}

std::vector<ParamSpec> box_params() {
    std::vector<ParamSpec> out;
    for (const char* axis : {"x", "y", "z"}) {
        ParamSpec s{std::string("--n") + axis, std::string("n") + axis, ParamKind::integer, "",
                    std::string("Points along ") + axis + " (default n)"};
        s.positive = true;
        out.push_back(s);
    }
    return out;
}

bool ParamReader::flag(const std::string& key) const {
    const ParamSpec& s = spec(key);
    const Params::Value* v = params_.find(key);
    if (!v) return false;
    if (const auto* b = std::get_if<bool>(v)) return *b;
    if (const auto* i = std::get_if<std::int64_t>(v)) return *i != 0;
    const std::string t = as_text(*v);
    if (t == "1" || t == "true") return true;
    if (t == "0" || t == "false") return false;
    bad(s, t, "true or false");
}

}  // namespace strata
