// The autotuner's logic and its wisdom store, without a GPU: size classes and keys, the store's
// round trip, merging of concurrent writers, what it does with bad files, and the search with a
// fake timer (it must find a planted optimum within its budget of measurements).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "strata/core/error.hpp"
#include "strata/tune.hpp"

namespace fs = std::filesystem;
using namespace strata;

namespace {

fs::path fresh(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("strata-tune-" + name + "-" + std::to_string(getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

Extent cube(int n) { return Extent{n, n, n, 1, 3}; }

WisdomEntry entry(const std::string& kernel, int depth, double ms) { return {{kernel, 0, depth, true}, ms, "2026-11-25T00:00:00Z"}; }

}  // namespace

TEST(Wisdom, SizeClassesAreHalfOctaves) {
    EXPECT_EQ(size_class(cube(512)), "512x512x512");
    EXPECT_EQ(size_class(cube(500)), size_class(cube(512)));
    EXPECT_EQ(size_class(cube(560)), size_class(cube(512)));
    EXPECT_NE(size_class(cube(362)), size_class(cube(512)));
    EXPECT_EQ(size_class(cube(362)), "362x362x362");
    EXPECT_EQ(size_class(Extent{8193, 8193, 1, 1, 2}), "8192x8192");
    EXPECT_EQ(size_class(Extent{1024, 256, 1, 1, 2}), "1024x256");
}

TEST(Wisdom, KeysNameModelStencilPrecisionAndClass) {
    const ModelInfo& heat = find_model("heat3d");
    EXPECT_EQ(wisdom_key(heat, {}, cube(500), Precision::fp32).text(), "heat3d stencil=7pt fp32 512x512x512");
    EXPECT_EQ(wisdom_key(heat, {{"stencil", std::string("27pt")}}, cube(512), Precision::fp64).text(),
              "heat3d stencil=27pt fp64 512x512x512");
    EXPECT_EQ(wisdom_key(find_model("apf"), {}, Extent{8193, 8193, 1, 1, 2}, Precision::fp32).text(),
              "apf fp32 8192x8192");
    // Over ranks the process grid and the link are part of it: their own entry, not one process'.
    EXPECT_EQ(wisdom_key(heat, {}, cube(512), Precision::fp32, "1x1x4 nccl overlap, 1 node").text(),
              "heat3d stencil=7pt fp32 512x512x512 ranks=1x1x4 nccl overlap, 1 node");
    EXPECT_EQ(ranks_key(parse_decomposition("1x1x2", 3), 3), "");  // one process: no ranks in the key
}

TEST(Wisdom, RoundTripThroughTheFile) {
    const fs::path d = fresh("round");
    std::ostringstream log;
    const std::string path = (d / "gpu.json").string();
    const WisdomKey key = wisdom_key(find_model("heat3d"), {}, cube(512), Precision::fp32);
    {
        Wisdom w(path, "GPU X", log);
        EXPECT_TRUE(w.entries().empty());
        WisdomEntry e = entry("temporal", 4, 0.1506);
        e.config.chunk = 171;
        e.measured_at = "2026-11-25T01:02:03Z";
        w.store(key, e);
    }
    Wisdom again(path, "GPU X", log);
    const std::optional<WisdomEntry> e = again.find(key, {"naive", "temporal"});
    ASSERT_TRUE(e);
    EXPECT_EQ(e->config, (LaunchConfig{"temporal", 171, 4, true}));
    EXPECT_EQ(e->ms_per_step, 0.1506);
    EXPECT_EQ(e->measured_at, "2026-11-25T01:02:03Z");
    EXPECT_FALSE(again.find(wisdom_key(find_model("heat3d"), {}, cube(256), Precision::fp32), {"temporal"}));
    EXPECT_FALSE(again.find(
        wisdom_key(find_model("heat3d"), {}, cube(512), Precision::fp32, "2x2x1 nccl overlap, 1 node"),
        {"temporal"}));
    EXPECT_EQ(log.str(), "");
    EXPECT_FALSE(fs::exists(path + ".tmp"));
    fs::remove_all(d);
}

// Two writers that read the file before either wrote: neither entry is lost.
TEST(Wisdom, ConcurrentWritersLoseNoEntry) {
    const fs::path d = fresh("merge");
    std::ostringstream log;
    const std::string path = (d / "gpu.json").string();
    Wisdom a(path, "GPU X", log), b(path, "GPU X", log);
    a.store({{"apf fp32 8192x8192", entry("temporal", 4, 0.15)}});
    b.store({{"apf fp64 8192x8192", entry("temporal", 2, 0.3)}});
    EXPECT_EQ(Wisdom(path, "GPU X", log).entries().size(), 2u);
    // And threads storing at once, each its own keys.
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            std::ostringstream quiet;
            Wisdom w(path, "GPU X", quiet);
            for (int i = 0; i < 10; ++i)
                w.store({{"heat3d stencil=7pt fp32 " + std::to_string(t) + "x" + std::to_string(i), entry("vec", 0, 1)}});
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(Wisdom(path, "GPU X", log).entries().size(), 42u);
    fs::remove_all(d);
}

TEST(Wisdom, BadFilesAreOneWarningAndIgnored) {
    const fs::path d = fresh("bad");
    const std::string path = (d / "gpu.json").string();
    std::string good;
    {
        std::ostringstream log;
        Wisdom(path, "GPU X", log).store({{"apf fp32 8192x8192", entry("temporal", 4, 0.15)}});
        std::ifstream f(path);
        good.assign(std::istreambuf_iterator<char>(f), {});
    }
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"not JSON", "\x01\x02garbage"},
        {"truncated", good.substr(0, good.size() / 2)},
        {"another version", std::string(R"({"format":"strata-wisdom","version":99,"device":"GPU X","entries":{}})")},
        {"another device", std::string(R"({"format":"strata-wisdom","version":1,"device":"GPU Y","entries":{}})")},
        {"not wisdom", std::string(R"([1,2,3])")},
    };
    for (const auto& [what, text] : cases) {
        std::ofstream(path, std::ios::trunc) << text;
        std::ostringstream log;
        Wisdom w(path, "GPU X", log);
        EXPECT_TRUE(w.entries().empty()) << what;
        const std::string said = log.str();
        EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << what << ": " << said;
        EXPECT_TRUE(said.starts_with("strata: warning: ignoring the wisdom in '" + path + "'")) << said;
        w.store({{"apf fp64 8192x8192", entry("temporal", 2, 0.3)}});  // rewritten, readable again
        std::ostringstream after;
        EXPECT_EQ(Wisdom(path, "GPU X", after).entries().size(), 1u) << what;
        EXPECT_EQ(after.str(), "");
    }
    // A malformed entry beside good ones: that entry alone is skipped.
    std::ofstream(path, std::ios::trunc)
        << R"({"format":"strata-wisdom","version":1,"device":"GPU X","entries":{)"
        << R"("apf fp32 8192x8192":{"kernel":"temporal","chunk":0,"depth":4,"graphs":true,"ms_per_step":0.15},)"
        << R"("apf fp64 8192x8192":{"kernel":"temporal","chunk":"many"}}})";
    std::ostringstream log;
    EXPECT_EQ(Wisdom(path, "GPU X", log).entries().size(), 1u);
    EXPECT_NE(log.str().find("malformed wisdom entry 'apf fp64 8192x8192'"), std::string::npos) << log.str();
    fs::remove_all(d);
}

TEST(Wisdom, AnEntryNamingAnUnknownKernelIsIgnoredWithAWarning) {
    const fs::path d = fresh("unknown");
    std::ostringstream log;
    const std::string path = (d / "gpu.json").string();
    Wisdom w(path, "GPU X", log);
    const WisdomKey key = wisdom_key(find_model("apf"), {}, Extent{8193, 8193, 1, 1, 2}, Precision::fp32);
    w.store(key, entry("warpspecialized", 0, 0.1));
    EXPECT_FALSE(w.find(key, {"naive", "temporal"}));
    EXPECT_NE(log.str().find("names the kernel 'warpspecialized', which this build does not have"), std::string::npos);
    fs::remove_all(d);
}

TEST(Wisdom, ForgetAndImport) {
    const fs::path d = fresh("forget");
    std::ostringstream log;
    Wisdom w((d / "gpu.json").string(), "GPU X", log);
    w.store({{"heat3d stencil=7pt fp32 512x512x512", entry("temporal", 4, 0.15)},
             {"heat3d stencil=27pt fp32 512x512x512", entry("async", 0, 0.5)},
             {"heat2d fp32 8192x8192", entry("temporal", 8, 0.05)}});
    EXPECT_EQ(w.forget("heat3d"), 2);  // not heat2d
    EXPECT_EQ(w.entries().size(), 1u);
    Wisdom other((d / "other.json").string(), "GPU X", log);
    other.store({{"apf fp32 8192x8192", entry("temporal", 4, 0.15)}});
    EXPECT_EQ(w.import(other.path()), 1);
    EXPECT_EQ(w.entries().size(), 2u);
    Wisdom foreign((d / "foreign.json").string(), "GPU Y", log);
    foreign.store({{"apf fp64 8192x8192", entry("temporal", 2, 0.3)}});
    EXPECT_THROW(w.import(foreign.path()), UsageError);
    EXPECT_THROW(w.import((d / "none.json").string()), UsageError);
    EXPECT_EQ(w.forget(""), 2);
    fs::remove_all(d);
}

// A fake device: each candidate has a true time, each measurement is off by up to +-1% (seeded
// noise), some candidates do not fit. The planted optimum is 3% ahead of the next.
TEST(Tuner, FindsThePlantedOptimumWithinItsBudget) {
    std::vector<LaunchConfig> candidates;
    for (const char* k : {"naive", "vec", "cached", "async", "temporal"})
        for (int depth : {0, 1, 2, 4, 8})
            for (int chunk : {0, 16, 32, 64})
                for (bool g : {true, false}) candidates.push_back({k, chunk, depth, g});
    const LaunchConfig planted{"temporal", 32, 4, true};
    std::map<std::string, double> truth;
    std::mt19937 rng(42);
    std::uniform_real_distribution<double> spread(1.03, 2.0), noise(0.99, 1.01);
    for (const LaunchConfig& c : candidates) truth[c.text()] = c == planted ? 1.0 : spread(rng);
    int calls = 0;
    const Measure fake = [&](const LaunchConfig& c, int repeats) -> std::optional<double> {
        ++calls;
        if (c.kernel == "cached" && c.depth == 8) return std::nullopt;  // a depth the kernel refuses
        double worst = 0;  // the quick round and a repeat each: noisy; the median of the final round's 7: closer
        for (int r = 0; r < repeats; ++r) worst = std::max(worst, noise(rng));
        return truth[c.text()] * (repeats == 0 ? noise(rng) : worst);
    };
    const TuneResult r = tune(candidates, fake);
    EXPECT_EQ(r.best, planted) << r.best.text();
    // Budget: every candidate once, an eighth again, three at the end.
    const int n = int(candidates.size());
    EXPECT_LE(r.measurements, n + (n + 7) / 8 + 3 * 7);
    EXPECT_EQ(calls, r.measurements);
    const TuneResult all = tune_exhaustive(candidates, fake);
    EXPECT_EQ(all.best, planted);
    EXPECT_EQ(all.measurements, n + 3 * 7);  // and its best three again, as the tuner's finalists
    EXPECT_THROW(tune(candidates, [](const LaunchConfig&, int) { return std::optional<double>(); }), UsageError);

    // The built-in default runs in the final round: measured beside the finalists, and the
    // winner when nothing beats it.
    const LaunchConfig builtin{"async", 0, 0, true};
    const TuneResult with = tune(candidates, fake, {}, {builtin});
    EXPECT_EQ(with.best, planted);
    int seen = 0;
    for (const Trial& t : with.trials)
        if (t.round == 2 && t.config == builtin) {
            ++seen;
            EXPECT_NEAR(t.ms_per_step, truth[builtin.text()], 0.02 * truth[builtin.text()]);
        }
    EXPECT_EQ(seen, 1);
    truth[builtin.text()] = 0.5;  // now the default is the fastest of all
    const TuneResult kept = tune(candidates, fake, {}, {builtin});
    EXPECT_EQ(kept.best, builtin);
}

TEST(Tuner, TheSearchSpaceCoversEveryKernelAndItsKnobs) {
    const std::vector<LaunchConfig> space = search_space(find_model("heat3d"), cube(512));
    const std::vector<std::string> kernels = kernel_names(Backend::cuda, "heat3d");
    if (kernels.empty()) GTEST_SKIP() << "a build without CUDA has no kernels to tune";
    std::set<std::string> seen_kernels, texts;
    for (const LaunchConfig& c : space) {
        seen_kernels.insert(c.kernel);
        EXPECT_TRUE(texts.insert(c.text()).second) << "twice: " << c.text();
    }
    EXPECT_EQ(seen_kernels.size(), kernels.size());
    auto has = [&](const LaunchConfig& c) { return texts.count(c.text()) == 1; };
    EXPECT_TRUE(has({"temporal", 171, 4, true}));  // the sweep's best in the notes: 512 / 3 planes
    EXPECT_TRUE(has({"temporal", 0, 2, false}));
    for (const std::string& k : kernel_names(Backend::cuda, "heat3d", true)) {
        const int depth = kernel_takes_depth(Backend::cuda, "heat3d", k) ? 4 : 0;
        EXPECT_TRUE(has({k, 128, depth, true})) << k;
    }
}
