#pragma once
// A model's options, declared once by the model and read the same way whether they come from the
// command line (`strata run apf -n 256`) or from a program (`Params{{"n", 256}}`, Python keywords).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace strata {

enum class ParamKind {
    integer,  // a whole number
    real,     // a number
    text,     // a word or a path
    texts,    // repeatable: one value per use (wave3d's --source)
    reals,    // several numbers at once (wave3d's --range LO HI)
    flag,     // present or not
};

struct ParamSpec {
    std::string flag;      // on the command line: "-n", "--steps"
    std::string key;       // in a program and the JSON report: "n", "steps"
    ParamKind kind = ParamKind::integer;
    std::string fallback;  // the default, as the command line would give it; "" for none
    std::string help;
    bool positive = false;      // integers and reals: must be > 0 (checked as the value is read)
    bool non_negative = false;  // must be >= 0
    int count = 1;              // reals: how many numbers
    bool run_only = false;      // acted on by `strata run`'s hooks and report (apf's -s, -p, -d), so
                                // refused by a Simulation that a program advances itself
};

// The values given for a model's options, by key. Anything not given reads as the option's
// default. Values keep the form they were given in (text from a command line, numbers from a
// program); ParamReader converts them, and a value that does not convert is a UsageError naming
// the option as the user wrote it.
class Params {
public:
    using Value = std::variant<bool, std::int64_t, double, std::string, std::vector<std::string>, std::vector<double>>;
    Params() = default;
    Params(std::initializer_list<std::pair<const std::string, Value>> v) : values_(v) {}
    void set(const std::string& key, Value v) { values_[key] = std::move(v); }
    bool has(const std::string& key) const { return values_.count(key) != 0; }
    const Value* find(const std::string& key) const;
    const std::map<std::string, Value>& values() const { return values_; }

private:
    std::map<std::string, Value> values_;
};

// Reads a model's options from Params against its declarations.
class ParamReader {
public:
    // UsageError for a key no declaration has: a misspelt keyword is not silently ignored.
    ParamReader(const std::vector<ParamSpec>& specs, const Params& params, std::string_view model);
    bool given(const std::string& key) const { return params_.has(key); }
    std::int64_t integer(const std::string& key) const;
    double real(const std::string& key) const;
    std::string text(const std::string& key) const;
    std::vector<std::string> texts(const std::string& key) const;
    std::vector<double> reals(const std::string& key) const;
    bool flag(const std::string& key) const;
    // Points along an axis of a box whose sides default to n (box_params' --nx, --ny, --nz).
    int side(const std::string& key, std::int64_t n) const;

private:
    const ParamSpec& spec(const std::string& key) const;
    std::vector<ParamSpec> specs_;  // a copy: callers pass the model's description, often a temporary
    const Params& params_;
};

// --nx, --ny and --nz, each the points along its axis, n (the model's -n) by default.
std::vector<ParamSpec> box_params();

}  // namespace strata
