#pragma once
// A run's report, text and JSON from one description of each line: a line's values are printed
// with its printf-style format and stored under their keys, so the two never disagree.
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace strata {

class Report {
public:
    // A value of a line: printed by the next conversion of the line's format, and stored in the
    // JSON under `key` (not stored when the key is empty).
    struct Item {
        std::string key;
        nlohmann::json value;
    };
    explicit Report(std::ostream& out) : out_(out) {}

    // Prints `format` with one item per conversion (%d, %lld, %g, %.6e, %s, ...; %% is a
    // percent sign) and records the items. Error when the counts differ.
    void line(std::string_view format, std::initializer_list<Item> items = {});
    void text(std::string_view s);                           // printed only
    void value(const std::string& key, nlohmann::json v);  // stored only
    std::ostream& out() { return out_; }
    const nlohmann::json& json() const { return json_; }
    nlohmann::json& json() { return json_; }

private:
    std::ostream& out_;
    nlohmann::json json_ = nlohmann::json::object();
};

// printf-style formatting of one value by one conversion (the helper behind Report::line).
std::string format_value(std::string_view conversion, const nlohmann::json& v);

}  // namespace strata
